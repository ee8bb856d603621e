// The suite's run.mjs writes the build's own config next to a copy of this app (output, roots); this file is the
// plain config a user starts from.
export default {};
