export * from './derp-region.js';
export * from './dns-domain.js';
export * from './errors.js';
export * from './events.js';
export * from './formats.js';
export * from './people.js';
export * from './requests.js';
export * from './schemas.js';
