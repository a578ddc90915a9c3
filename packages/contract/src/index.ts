export * from './errors.js';
export * from './formats.js';
export * from './requests.js';
export * from './schemas.js';
