/** This client's version, sent in its User-Agent (`warren-typescript/<version>`); package.json's. */
export const VERSION = '0.1.0';
