#!/usr/bin/env node
// The `runx` executable: a thin launcher for the bundled CLI in dist/.
import { main } from "../dist/cli.js";

main(process.argv.slice(2));
