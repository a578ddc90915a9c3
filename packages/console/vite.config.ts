/** The console's build: hashed assets under /assets, no inline scripts (the server's CSP forbids them). */
import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  // The client and contract from their sources (see their package.json exports): the console
  // builds without building them first, and its staleness check watches those sources.
  resolve: { conditions: ['@warren/source', ...defaultClientConditions] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
