// The TypeScript stripper of the examples' Run buttons, bundled by build.mjs into assets/ts.js: Sucrase's
// `typescript` transform removes the types and keeps the rest of the text as written, line for line (so an error's
// line is the block's), with no other transform (the browsers run today's JavaScript as it is).
import { transform } from "sucrase";

/** JavaScript of a TypeScript module's text; throws a SyntaxError naming the line of a mistake. */
export function stripTypes(code) {
  return transform(code, { transforms: ["typescript"], disableESTransforms: true, keepUnusedImports: false }).code;
}
