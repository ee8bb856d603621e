// Types of `require()` of this entry (CommonJS): the `.d.cts` twin of index.d.ts, so a CommonJS TypeScript project
// (`module: node16`) sees a CommonJS declaration for a CommonJS file.
// The generated classes declare `[Symbol.dispose]()` (explicit resource management): pull in its lib declaration so
// projects compiling with an older `lib` setting still type-check.
/// <reference lib="esnext.disposable" />
// @EXPORTS@
