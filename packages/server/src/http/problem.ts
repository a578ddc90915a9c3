/** The domain errors live in core/ (services throw them); the HTTP layer maps them to problems. */
export * from '../core/errors.js';
