import { runCli } from "./cli/program.js";

await runCli();
