/**
 * The nonce of this page's Content-Security-Policy for `<style>` elements, which the server
 * writes into index.html per response. Browsers hide a nonce from attribute reads, so it is
 * read through the `nonce` property. (The Vite dev server sends no policy and leaves the
 * placeholder, which is then harmless.)
 */
export const styleNonce: string = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce ?? '';
