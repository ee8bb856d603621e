// Kept for `cargo xtask demo` until it calls www/dev.mjs directly: the same launcher with its default paths.
import { main } from "./dev.mjs";

await main(process.argv.slice(2));
