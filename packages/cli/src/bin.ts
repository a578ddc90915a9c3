/** The entry point of the `warren` executable (bin/warren.js loads its build). */
import { main } from './main.js';

await main(process.argv);
