// Bundles src/editor.js into static/vendor/codemirror/editor.js (one minified IIFE,
// committed so the app never needs npm) and writes LICENSE.txt beside it with the
// license of every npm package that ended up in the bundle.
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "..", "..", "static", "vendor", "codemirror");
mkdirSync(outDir, { recursive: true });

const result = await esbuild.build({
  entryPoints: [join(here, "src", "editor.js")],
  outfile: join(outDir, "editor.js"),
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  legalComments: "none", // the notices go to LICENSE.txt instead
  banner: { js: "/* CodeMirror 6 for code answers; built from frontend/editor (npm run build). Licenses: LICENSE.txt */" },
  metafile: true,
  logLevel: "info",
});

// node_modules/<name> or node_modules/@scope/<name> of every bundled input
const packageDirs = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const match = input.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//);
  if (match) packageDirs.add(match[1]);
}

const notices = [...packageDirs].sort().map((relative) => {
  const dir = join(process.cwd(), relative);
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const licenseFile = readdirSync(dir).find((name) => /^licen[cs]e(\.(md|txt))?$/i.test(name));
  if (!licenseFile) throw new Error(`${meta.name} ships no license file`);
  const text = readFileSync(join(dir, licenseFile), "utf8").trim();
  return `${meta.name}@${meta.version} (${meta.license})\n\n${text}\n`;
});

const header =
  "static/vendor/codemirror/editor.js bundles the npm packages below, built by\n" +
  "frontend/editor (npm ci && npm run build). Each one's license follows.\n";
writeFileSync(join(outDir, "LICENSE.txt"), [header, ...notices].join("\n" + "-".repeat(78) + "\n\n"));
console.log(`${notices.length} package licenses -> ${join(outDir, "LICENSE.txt")}`);
