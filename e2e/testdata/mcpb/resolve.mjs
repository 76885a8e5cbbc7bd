// Prints the command line Claude Desktop would run for an unpacked bundle,
// resolved by the mcpb package's own getMcpConfigForManifest (the function
// Claude Desktop uses): ${__dirname} and ${user_config.*} filled in from
// the manifest's defaults and the user's settings.
//
//   node resolve.mjs BUNDLE_DIR '{"allowed_domains": "127.0.0.1"}'
import { readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";

const [dir, settings] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: { HOME: process.env.HOME ?? "", DESKTOP: "", DOCUMENTS: "", DOWNLOADS: "" },
  userConfig: JSON.parse(settings ?? "{}"),
  pathSeparator: sep,
});
if (!config) {
  console.error("the bundle's configuration is incomplete");
  process.exit(1);
}
console.log(JSON.stringify(config));
