// `node --import` this file to run an example against the test build instead of `dist/`.
import { register } from "node:module";

register("./fresh-build-hooks.mjs", import.meta.url, { data: { buildDir: process.env.CHATSVC_TEST_BUILD_DIR } });
