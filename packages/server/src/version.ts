/** The server's version, shown in the OpenAPI document and `warren --version`. */
export const VERSION = '0.1.0';
