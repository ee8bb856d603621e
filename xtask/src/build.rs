//! `cargo xtask build`: release wasm -> wasm-bindgen (web glue) -> wasm-opt -> entry files -> pkg/.

use crate::minify;
use crate::util::{self, root, step};
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The wasm-opt level: measured in PERFORMANCE.md, "Steady state" (size and verify speed of -O2, -O3, -Oz).
pub const WASM_OPT_LEVEL: &str = "-O3";

/// Features the Rust 1.95 wasm32 target emits; wasm-opt must accept them and keep within them.
const WASM_FEATURES: &[&str] = &[
    "--enable-bulk-memory",
    "--enable-mutable-globals",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-reference-types",
    "--enable-multivalue",
];

/// Entry files copied from pkg-template/ into every entry folder. Placeholders: the `// @EXPORTS@` line becomes the
/// re-exports of the entry's glue, `@WASM@` the file name of its module, and the `// @NODE_CRYPTO(..)@` line the hand-over
/// of `node:crypto` where the module verifies webhooks (nothing where it does not: a generated entry imports only
/// what its glue exports, which strict ESM linking in Turbopack and webpack requires).
const TEMPLATES: &[&str] = &[
    "index.js",
    "node.js",
    "index.cjs",
    "deno.js",
    "workerd.js",
    "edge-light.js",
    "index.d.ts",
    "index.d.cts",
];

/// Names of the glue that the entries must not re-export (initialisation is the entry's job).
const HIDDEN: &[&str] = &[
    "initSync",
    "default",
    "__wbg_init",
    "InitInput",
    "InitOutput",
    "SyncInitInput",
    // The handle of one method call in flight, which the client's own promise.js drives; not part of the API.
    "FlowStepper",
    // How the Node entry hands `node:crypto` to the webhook verifier; not part of the API.
    NODE_CRYPTO,
    // How the entries hand the P-256 module's loader to the webhook verifier; not part of the API.
    P256,
];

/// The glue export through which the Node entry hands `node:crypto` to a module that verifies.
const NODE_CRYPTO: &str = "__useNodeCrypto";

/// The glue export through which every entry of `docauto/webhooks` hands over the loader of its P-256 module.
const P256: &str = "__useP256";

/// The crate an entry's module is built from.
enum Source {
    /// The SDK crate (`docauto`) with these Cargo features; its entry files are generated from pkg-template/ (the
    /// glue's exports re-exported).
    Docauto { features: &'static str },
    /// The emulator crate (`docauto-emulator`, emulator/) as a cdylib; its entry files are written by hand
    /// (pkg-template/emulator/: `createEmulator`, `startEmulator` and the `docauto-emulator` bin over the glue).
    Emulator,
}

/// One entry of the package: its folder, its wasm module and how that module is built.
pub struct Entry {
    /// The import specifier (`docauto`, `docauto/webhooks`, ...).
    pub name: &'static str,
    /// Folder under pkg/ ("" for the package root).
    pub dir: &'static str,
    /// File name of its wasm module, under `<dir>/wasm/`. Distinct per entry: a user whose bundler emits no asset for
    /// `new URL("x.wasm", import.meta.url)` (esbuild) copies every module into one folder next to the bundle.
    pub module: &'static str,
    /// The crate of the module.
    source: Source,
    /// Cargo target dir, so the entries do not rebuild each other.
    target_dir: &'static str,
    /// JS modules of the entry beside its glue (each with a `.d.ts` of the same stem next to it), copied into the
    /// entry folder and re-exported by it: code that only calls bindings it is given, smaller as JS than as wasm.
    modules: &'static [&'static str],
    /// Cargo profile (Cargo.toml): `release` (opt-level 3) for the modules whose calls are speed-bound (the client,
    /// the verifier); `wasm-size` (opt-level "s", the crypto crates at 3) for the test signer; `wasm-realtime` ("z")
    /// for `docauto/realtime`, whose resampler stays well above its speed floor; `wasm-emulator` ("z") for the
    /// emulator, judged on size.
    profile: &'static str,
    /// wasm-opt options beyond the level ([`WASM_OPT_LEVEL`]).
    wasm_opt: &'static [&'static str],
    /// A second module the entry loads only when it is needed, built with the entry's profile.
    pub companion: Option<Companion>,
}

/// wasm-opt's options for `docauto/webhooks`: a function with one caller is inlined into it only up to 40 bytes
/// (binaryen's default: any size). Otherwise the constructor's option, key-set and JWK readers and the error paths
/// of `verify` are folded into the export shims, and V8, which compiles a wasm function at its first call, compiles
/// all of it on a cold start's first delivery, the branches that never run included. Measured by V8's
/// `--trace-wasm-compilation-times` over a Deno process that constructs and verifies once: 63.1 KB of function
/// bodies compiled before the first answer instead of 69.5 (this option alone; `cargo xtask bench` has the cold
/// start), and the module 0.8 KB gzip smaller. LLVM's inlining of the hot paths is untouched.
const WEBHOOKS_WASM_OPT: &[&str] = &["--one-caller-inline-max-function-size", "40"];

/// A second module of an entry: `docauto/webhooks`' P-256 check (`docauto-webhooks-p256.wasm`, feature
/// `webhooks-p256`), asked only where no host crypto answers, so most cold starts never instantiate it. Where the
/// entry reads the file on first use (Node, Deno, Bun) they never compile it either; workerd compiles every module of
/// a Worker at its start, imported or not (about 0.8 ms of a cold start for this one, measured with
/// `cargo xtask bench`).
pub struct Companion {
    /// File name of the module, under the entry's `wasm/`.
    pub module: &'static str,
    /// Its glue, `<glue>.js` under the entry's `wasm/` (wasm-bindgen `--out-name`).
    glue: &'static str,
    /// Cargo features of the SDK crate that build it.
    features: &'static str,
    /// Cargo target dir.
    target_dir: &'static str,
    /// Cargo profile.
    profile: &'static str,
}

/// One entry per use, each with its own module: the API client (`docauto`), the webhook verifier (`docauto/webhooks`,
/// for edge functions), live transcription (`docauto/realtime`, for a page: no API client, no verifier), the test
/// signer (`docauto/testing`, for users' unit tests of their webhook handlers; they take the verifier from
/// `docauto/webhooks`) and the local emulator (`docauto/emulator`, for users' tests of their app, and the
/// `docauto-emulator` bin).
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "docauto",
        dir: "",
        module: "docauto-client.wasm",
        source: Source::Docauto {
            features: "client talc-allocator",
        },
        target_dir: "target/client",
        profile: "release",
        wasm_opt: &[],
        modules: &[],
        companion: None,
    },
    Entry {
        name: "docauto/webhooks",
        dir: "webhooks",
        module: "docauto-webhooks.wasm",
        source: Source::Docauto {
            features: "webhooks talc-allocator",
        },
        target_dir: "target/webhooks",
        profile: "release",
        wasm_opt: WEBHOOKS_WASM_OPT,
        modules: &["src/wasm/webhook/stores.js"],
        companion: Some(Companion {
            module: "docauto-webhooks-p256.wasm",
            glue: "p256",
            features: "webhooks-p256 talc-allocator",
            target_dir: "target/webhooks-p256",
            profile: "release",
        }),
    },
    Entry {
        name: "docauto/realtime",
        dir: "realtime",
        module: "docauto-realtime.wasm",
        source: Source::Docauto {
            features: "realtime talc-allocator",
        },
        target_dir: "target/realtime",
        profile: "wasm-realtime",
        wasm_opt: &[],
        modules: &[],
        companion: None,
    },
    Entry {
        name: "docauto/testing",
        dir: "testing",
        module: "docauto-testing.wasm",
        source: Source::Docauto {
            features: "testing talc-allocator",
        },
        target_dir: "target/testing",
        profile: "wasm-size",
        wasm_opt: &[],
        modules: &[],
        companion: None,
    },
    Entry {
        name: "docauto/emulator",
        dir: "emulator",
        module: "docauto-emulator.wasm",
        source: Source::Emulator,
        target_dir: "target/emulator",
        profile: "wasm-emulator",
        wasm_opt: &[],
        modules: &[],
        companion: None,
    },
];

/// The hand-written files of `docauto/emulator` (pkg-template/emulator/), copied as they are.
const EMULATOR_FILES: &[&str] = &[
    "core.js",
    "socket.js",
    "serve.js",
    "index.js",
    "node.js",
    "deno.js",
    "workerd.js",
    "edge-light.js",
    "index.cjs",
    "index.d.ts",
    "bin.js",
];

impl Entry {
    /// The module's path under pkg/ (`wasm/docauto-client.wasm`, `webhooks/wasm/docauto-webhooks.wasm`).
    pub fn wasm_path(&self) -> String {
        if self.dir.is_empty() {
            format!("wasm/{}", self.module)
        } else {
            format!("{}/wasm/{}", self.dir, self.module)
        }
    }
}

/// Builds pkg/ from scratch.
pub fn build() -> Result<(), String> {
    let r = root();
    let pkg = r.join("pkg");
    if pkg.exists() {
        fs::remove_dir_all(&pkg).map_err(|e| format!("cannot clear pkg/: {e}"))?;
    }
    for entry in ENTRIES {
        build_entry(&r, entry)?;
    }
    write(&pkg.join("package.json"), &package_json()?)?;
    copy_docs(&r, &pkg)?;
    link_into_node_modules(&r)
}

/// The documentation the package ships beside its code, so that every relative link of the README (which npm shows)
/// resolves inside the tarball: the root Markdown files and the guides of `docs/` (`tests/docs/links.mjs` checks
/// the links against `npm pack`'s file list).
pub const DOC_FILES: &[&str] = &[
    "README.md",
    "api.md",
    "CHANGELOG.md",
    "MIGRATION.md",
    "BENCHMARKS.md",
    "PERFORMANCE.md",
    "CONTRIBUTING.md",
];

/// The folder of guides shipped whole.
const DOCS_DIR: &str = "docs";

/// Copies [`DOC_FILES`] that exist and the Markdown files of [`DOCS_DIR`] into pkg/.
fn copy_docs(r: &Path, pkg: &Path) -> Result<(), String> {
    for file in DOC_FILES {
        if let Ok(text) = fs::read_to_string(r.join(file)) {
            write(&pkg.join(file), &text)?;
        }
    }
    let Ok(entries) = fs::read_dir(r.join(DOCS_DIR)) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            write(&pkg.join(DOCS_DIR).join(&name), &read(&entry.path())?)?;
        }
    }
    Ok(())
}

fn build_entry(r: &Path, entry: &Entry) -> Result<(), String> {
    let label = entry.name;
    // The SDK crate is a cdylib already; the emulator crate is a plain library natively (its tests, its binary), so
    // its wasm build asks for the cdylib here.
    let (cargo_args, crate_file): (Vec<&str>, &str) = match entry.source {
        Source::Docauto { features } => (sdk_build_args(features).to_vec(), "docauto.wasm"),
        Source::Emulator => (
            vec![
                "rustc",
                "-p",
                "docauto-emulator",
                "--lib",
                "--crate-type",
                "cdylib",
            ],
            "docauto_emulator.wasm",
        ),
    };
    let out = r.join("pkg").join(entry.dir);
    let wasm_dir = out.join("wasm");
    let module = Module {
        label,
        cargo_args: &cargo_args,
        crate_file,
        target_dir: entry.target_dir,
        profile: entry.profile,
        out_name: "docauto",
        file: entry.module,
        wasm_opt: entry.wasm_opt,
    };
    let glue_js = build_module(r, &module, &wasm_dir)?;
    let wasm = wasm_dir.join(entry.module);
    if let Source::Emulator = entry.source {
        return write_emulator_files(r, entry, &out, &wasm);
    }
    let glue_dts = read(&wasm_dir.join("docauto.d.ts"))?;
    let mut values = exported_names(&glue_js, &["class", "function", "const", "let"]);
    // The JS error classes live in a snippet the glue imports: the entries re-export them from that same file, so
    // `instanceof` holds for the errors the wasm throws. Only classes the declarations describe are exported.
    let declared = exported_names(&glue_dts, &["class"]);
    let (errors_path, error_classes) = error_snippet(&wasm_dir)?;
    let error_classes: Vec<String> = error_classes
        .into_iter()
        .filter(|c| declared.contains(c))
        .collect();
    let types: Vec<String> = exported_names(&glue_dts, &["type", "interface", "class"])
        .into_iter()
        .filter(|t| !values.contains(t) && !error_classes.contains(t))
        .collect();
    let mut js_line = reexport(&values, &[]);
    if !error_classes.is_empty() {
        js_line.push_str(&format!(
            "\nexport {{ {} }} from \"./wasm/{errors_path}\";",
            error_classes.join(", ")
        ));
    }
    values.extend(error_classes.iter().cloned());
    let mut dts_line = reexport(&values, &types);
    for module in entry.modules {
        let (js, dts) = entry_module(r, module, &errors_path, &out)?;
        js_line.push_str(&js);
        dts_line.push_str(&dts);
    }
    let verifies = glue_exports(&glue_js, NODE_CRYPTO);
    for name in TEMPLATES {
        let src = read(&r.join("pkg-template").join(name))?;
        let text = if name.ends_with(".d.ts") {
            src.replace("// @EXPORTS@", &dts_line)
        } else if name.ends_with(".d.cts") {
            // A CommonJS declaration re-exports from a CommonJS declaration (`wasm/docauto.d.cts`, below): importing
            // the ESM `.d.ts` from it is an error under `module: node16`.
            src.replace(
                "// @EXPORTS@",
                &entry
                    .modules
                    .iter()
                    .filter_map(|m| Path::new(m).file_name().and_then(|f| f.to_str()))
                    .fold(
                        dts_line.replace("\"./wasm/docauto.js\"", "\"./wasm/docauto.cjs\""),
                        |line, file| {
                            line.replace(
                                &format!("\"./{file}\""),
                                &format!("\"./{}\"", file.replace(".js", ".cjs")),
                            )
                        },
                    ),
            )
        } else {
            let text = entry_source(&src, &js_line, entry.module, verifies);
            p256_hand_over(&text, name, entry.companion.as_ref())
        };
        write(&out.join(name), &text)?;
    }
    write(&wasm_dir.join("docauto.d.cts"), &glue_dts)?;
    let size = fs::metadata(&wasm).map(|m| m.len()).unwrap_or(0);
    step(&format!(
        "{label}: exports {} ({} type names); {} {size} bytes",
        values.join(", "),
        types.len(),
        entry.wasm_path()
    ));
    // Built after the entry's own files: its glue is not re-exported, and the error snippet above is the entry's.
    if let Some(companion) = &entry.companion {
        let args = sdk_build_args(companion.features);
        let module = Module {
            label: companion.module,
            cargo_args: &args,
            crate_file: "docauto.wasm",
            target_dir: companion.target_dir,
            profile: companion.profile,
            out_name: companion.glue,
            file: companion.module,
            wasm_opt: &[],
        };
        build_module(r, &module, &wasm_dir)?;
        // Its declarations describe a hidden export: the package ships the JS and the module only.
        for file in [
            format!("{}.d.ts", companion.glue),
            format!("{}_bg.wasm.d.ts", companion.glue),
        ] {
            let _ = fs::remove_file(wasm_dir.join(file));
        }
        let size = fs::metadata(wasm_dir.join(companion.module))
            .map(|m| m.len())
            .unwrap_or(0);
        step(&format!(
            "{label}: companion {}/wasm/{} {size} bytes",
            entry.dir, companion.module
        ));
    }
    // Last: the companion's glue is one of the files these take in.
    for (name, platform) in ONE_FILE {
        one_file(r, &out.join(name), platform)?;
    }
    Ok(())
}

/// The entries a fresh process imports as they are, with no bundler of the user's in between (`node.js`: Node and
/// Bun; `deno.js`), each bundled by esbuild with what it imports (the glue, its snippets, the entry's JS modules, the
/// companion's glue) into that one file, for the esbuild platform named here. Every file of an ES module graph costs
/// these loaders a resolution, a read and a parse: `docauto/webhooks`' Node entry was 7 files. Its import in a fresh
/// process, the same build unbundled and bundled (61 alternating processes each, medians): Node 19.0 -> 13.5 ms,
/// Deno 6.0 -> 5.0, Bun 14.9 -> 14.3; the client's (`docauto`) in Node 15.3 -> 12.6 (BENCHMARKS.md, cold start, has
/// the method and tests/js/cold-start.mjs `--baseline` runs). Not the other entry files: a browser page, workerd
/// (wrangler) and Vercel's edge runtime get the package through a bundler, and their glue keeps the default init,
/// whose `new URL("<module>.wasm", import.meta.url)` is relative to `wasm/`.
const ONE_FILE: &[(&str, &str)] = &[("node.js", "node"), ("deno.js", "neutral")];

/// Bundles the entry file `path` in place ([`ONE_FILE`]), under its own leading comment and a line saying so. Refuses
/// a bundle that still imports a file of the package, or builds a URL of anything but the entry's `wasm/` (the glue's
/// `new URL("<module>.wasm", import.meta.url)`, relative to `wasm/`, would point beside the bundle: esbuild drops it
/// with the default init these entries never call).
fn one_file(r: &Path, path: &Path, platform: &str) -> Result<(), String> {
    let tool = r.join("node_modules/.bin/esbuild");
    if !tool.exists() {
        return Err("node_modules/.bin/esbuild missing: run cargo xtask install".into());
    }
    let shown = path.strip_prefix(r).unwrap_or(path).display().to_string();
    step(&format!(
        "{shown}: one file (esbuild --bundle --platform={platform})"
    ));
    let source = read(path)?;
    let tmp = path.with_extension("bundle.js");
    util::run(
        Command::new(&tool)
            .arg(path)
            .args([
                "--bundle",
                "--format=esm",
                &format!("--platform={platform}"),
                // wasm-bindgen repeats a snippet's key in its import object (the same module, harmless).
                "--log-level=error",
            ])
            .arg(format!("--outfile={}", tmp.display())),
        Duration::from_secs(2 * 60),
    )?;
    let code = read(&tmp)?;
    fs::remove_file(&tmp).map_err(|e| format!("cannot remove {}: {e}", tmp.display()))?;
    if let Some(at) = ["from \"./", "from \"../", "import(\"./", "import \"./"]
        .iter()
        .find_map(|import| code.find(import))
    {
        return Err(format!(
            "{shown}: the bundle still imports a file: {}",
            code.get(at..).unwrap_or("").lines().next().unwrap_or("")
        ));
    }
    if let Some(url) = code
        .split("new URL(")
        .skip(1)
        .find(|rest| !rest.starts_with("\"./wasm/"))
    {
        return Err(format!(
            "{shown}: the bundle builds a URL outside wasm/: new URL({}",
            url.lines().next().unwrap_or("")
        ));
    }
    let comment: String = source
        .lines()
        .take_while(|line| line.starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    write(
        path,
        &format!(
            "{comment}// One file: pkg-template/{} bundled with the glue under wasm/ by cargo xtask build (esbuild).\n{code}",
            path.file_name().and_then(|f| f.to_str()).unwrap_or("")
        ),
    )
}

/// Copies a JS module of an entry (`src/...js`, its `.d.ts` beside it) into the entry folder, its `@ERRORS@` the path
/// of the glue's error classes under `wasm/` (so `instanceof` holds for its errors too), with a `.d.cts` twin that
/// imports the CommonJS declarations. Returns the lines that re-export it from the entry's JS and declarations.
fn entry_module(
    r: &Path,
    module: &str,
    errors_path: &str,
    out: &Path,
) -> Result<(String, String), String> {
    let js = read(&r.join(module))?.replace("@ERRORS@", errors_path);
    let file = Path::new(module)
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or_else(|| format!("{module}: no file name"))?;
    let stem = file.trim_end_matches(".js");
    let dts = read(&r.join(module.replace(".js", ".d.ts")))?;
    write(&out.join(file), &js)?;
    write(&out.join(format!("{stem}.d.ts")), &dts)?;
    write(
        &out.join(format!("{stem}.d.cts")),
        &dts.replace("\"./wasm/docauto.js\"", "\"./wasm/docauto.cjs\""),
    )?;
    let values = exported_names(&js, &["function", "class", "const"]);
    let types: Vec<String> = exported_names(&dts, &["interface", "type"])
        .into_iter()
        .map(|t| format!("type {t}"))
        .collect();
    let js_line = format!("\nexport {{ {} }} from \"./{file}\";", values.join(", "));
    let dts_line = format!(
        "\nexport {{ {} }} from \"./{file}\";",
        [values, types].concat().join(", ")
    );
    Ok((js_line, dts_line))
}

/// `cargo build` of the SDK crate's library with these features alone (an entry's module, or its companion).
fn sdk_build_args(features: &str) -> [&str; 7] {
    [
        "build",
        "-p",
        "docauto",
        "--lib",
        "--no-default-features",
        "--features",
        features,
    ]
}

/// One wasm module to build: the crate and features (`cargo_args`), then wasm-bindgen's web glue named
/// `<out_name>.js` and the module renamed to `file`, both in the entry's `wasm/`.
struct Module<'a> {
    label: &'a str,
    cargo_args: &'a [&'a str],
    crate_file: &'a str,
    target_dir: &'a str,
    profile: &'a str,
    out_name: &'a str,
    file: &'a str,
    wasm_opt: &'a [&'a str],
}

/// cargo (wasm32, the module's profile) -> wasm-bindgen --target web -> rename -> wasm-opt -> the patched glue, which
/// it writes and returns.
fn build_module(r: &Path, m: &Module<'_>, wasm_dir: &Path) -> Result<String, String> {
    let label = m.label;
    step(&format!(
        "{label}: cargo {} --profile {} --target wasm32-unknown-unknown",
        m.cargo_args.join(" "),
        m.profile
    ));
    util::run(
        Command::new("cargo")
            .args(m.cargo_args)
            .args([
                "--profile",
                m.profile,
                "--target",
                "wasm32-unknown-unknown",
                "--target-dir",
            ])
            .arg(r.join(m.target_dir))
            .current_dir(r),
        Duration::from_secs(30 * 60),
    )?;
    step(&format!(
        "{label}: wasm-bindgen --target web --remove-name-section"
    ));
    util::run(
        Command::new(r.join(".tools/bin/wasm-bindgen"))
            .arg(
                r.join(m.target_dir)
                    .join("wasm32-unknown-unknown")
                    .join(m.profile)
                    .join(m.crate_file),
            )
            .args([
                "--target",
                "web",
                "--remove-name-section",
                "--out-name",
                m.out_name,
                "--out-dir",
            ])
            .arg(wasm_dir)
            .current_dir(r),
        Duration::from_secs(5 * 60),
    )?;
    let wasm = wasm_dir.join(m.file);
    let produced = format!("{}_bg.wasm", m.out_name);
    fs::rename(wasm_dir.join(&produced), &wasm)
        .map_err(|e| format!("cannot rename the module to {}: {e}", m.file))?;
    let printed = wasm_opt(
        &wasm,
        WASM_OPT_LEVEL,
        &[m.wasm_opt, &[minify::MINIFY]].concat(),
    )?;
    let names = minify::names(&wasm, &printed)?;
    let glue_path = wasm_dir.join(format!("{}.js", m.out_name));
    let glue_js = patch_glue(&read(&glue_path)?, &produced, m.file)?;
    let glue_js = minify::rename_glue(&glue_js, &names, &format!("./{}_bg.js", m.out_name))?;
    write(&glue_path, &glue_js)?;
    // The declarations of the module's exports: the glue's `InitOutput` (hidden by every entry) takes the new names,
    // and wasm-bindgen's `<out>_bg.wasm.d.ts` (the raw exports, for a bundler's wasm-ESM integration, which no entry
    // uses) is not shipped.
    let dts_path = wasm_dir.join(format!("{}.d.ts", m.out_name));
    let dts = minify::rename_init_output(&read(&dts_path)?, &names)?;
    write(&dts_path, &dts)?;
    let _ = fs::remove_file(wasm_dir.join(format!("{}_bg.wasm.d.ts", m.out_name)));
    Ok(glue_js)
}

/// `docauto/emulator`'s files: copied from pkg-template/emulator/ (the bin executable), beside its glue and module.
fn write_emulator_files(r: &Path, entry: &Entry, out: &Path, wasm: &Path) -> Result<(), String> {
    for name in EMULATOR_FILES {
        write(
            &out.join(name),
            &read(&r.join("pkg-template/emulator").join(name))?,
        )?;
    }
    // The declarations import nothing, so the CommonJS twin is the same text under its own name.
    let dts = read(&r.join("pkg-template/emulator/index.d.ts"))?;
    write(
        &out.join("index.d.cts"),
        &format!(
            "// CommonJS twin of index.d.ts (the types of `require(\"docauto/emulator\")`).\n{dts}"
        ),
    )?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(out.join("bin.js"), fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot make emulator/bin.js executable: {e}"))?;
    }
    let size = fs::metadata(wasm).map(|m| m.len()).unwrap_or(0);
    step(&format!(
        "{}: createEmulator, startEmulator, bin docauto-emulator; {} {size} bytes",
        entry.name,
        entry.wasm_path()
    ));
    Ok(())
}

/// An entry's JS source from its template: its re-exports, its module's file name, and the hand-over of
/// `node:crypto` when the glue has one (`verifies`): the placeholder `// @NODE_CRYPTO(node)@` of node.js becomes the
/// hand-over ([`node_crypto_hand_over`]), `// @NODE_CRYPTO(deno)@` of deno.js the note of why Deno takes none.
fn entry_source(template: &str, exports: &str, module: &str, verifies: bool) -> String {
    let mut text = template
        .replace("// @EXPORTS@", exports)
        .replace("@WASM@", module);
    for runtime in ["node", "deno"] {
        let placeholder = format!("// @NODE_CRYPTO({runtime})@");
        let hand_over = match (verifies, runtime == "node") {
            (false, _) => "// This module verifies no signatures: it takes no node:crypto.".to_owned(),
            (true, true) => node_crypto_hand_over(),
            (true, false) => "// Deno: no node:crypto. Touching `process` or `node:crypto` starts Deno's Node compatibility layer,\n\
                 // which cost a cold start more than the whole verifier (tests/js/cold-start.mjs): verify checks signatures\n\
                 // with WebCrypto, verifySync with p256 in wasm, and bodies are hashed in wasm (as in workerd)."
                .to_owned(),
        };
        text = text.replace(&placeholder, &hand_over);
    }
    text
}

/// The `// @P256_START@` and `// @P256@` lines of the template `name`: where the entry has a P-256 module, the
/// loader handed to the verifier's module with `__useP256` (called on the first check no host crypto answers), as
/// each runtime can make it: from the `.wasm` import in workerd and the edge runtime (which compile no bytes at run
/// time), from the file in Node, Bun and Deno; in browsers it is fetched and compiled beside the verifier's own
/// module (a page may not compile a module of this size synchronously). Nothing where there is none.
fn p256_hand_over(text: &str, name: &str, companion: Option<&Companion>) -> String {
    let Some(c) = companion else {
        return text
            .replace("// @P256_START@\n", "")
            .replace("// @P256@\n", "");
    };
    let (glue, file) = (c.glue, c.module);
    let import = format!(
        "import {{ initSync as initP256, verifyP256 }} from \"./wasm/{glue}.js\";\nimport {{ {P256} }} from \"./wasm/docauto.js\";"
    );
    let lines = match name {
        "node.js" => format!(
            "// P-256 checks where no host crypto answers (verifySync in Bun, a host that threw): a second module, read and\n\
             // compiled on first use.\n{import}\n\n{P256}(() => (initP256({{ module: readFileSync(join(dirname(fileURLToPath(import.meta.url)), \"wasm\", \"{file}\")) }}), verifyP256));"
        ),
        "deno.js" => format!(
            "// P-256 checks where no host crypto answers (verifySync): a second module, read and compiled on first use.\n{import}\n\n\
             {P256}(() => (initP256({{ module: Deno.readFileSync(new URL(\"./wasm/{file}\", import.meta.url)) }}), verifyP256));"
        ),
        "workerd.js" | "edge-light.js" => format!(
            "// P-256 checks where no host crypto answers (verifySync): a second module, imported compiled like the first and\n\
             // instantiated on first use.\nimport p256Module from \"./wasm/{file}{}\";\n{import}\n\n{P256}(() => (initP256({{ module: p256Module }}), verifyP256));",
            if name == "edge-light.js" { "?module" } else { "" }
        ),
        "index.js" => {
            let start = format!(
                "// P-256 checks where no host crypto answers (verifySync): a second module, fetched and compiled beside the first.\n\
                 import initP256, {{ verifyP256 }} from \"./wasm/{glue}.js\";\nimport {{ {P256} }} from \"./wasm/docauto.js\";\n\n\
                 const p256 = initP256({{ module_or_path: new URL(\"./wasm/{file}\", import.meta.url) }});"
            );
            return text
                .replace("// @P256_START@", &start)
                .replace(
                    "// @P256@",
                    &format!(
                        "// A module that did not load leaves verify working; verifySync then refuses what needs it (invalid_signature).\n\
                         await p256.catch(() => undefined);\n{P256}(() => verifyP256);"
                    ),
                );
        }
        _ => String::new(),
    };
    text.replace("// @P256_START@\n", "")
        .replace("// @P256@", &lines)
}

/// The lines that hand `node:crypto` to a verifying module in Node (`verify` and `verifySync` check signatures and
/// hash bodies with it). Bun takes the same entry but not its `node:crypto`: importing it costs a Bun cold start more
/// than the whole verifier, and Bun's WebCrypto verifies faster than its `node:crypto` (measured: about 5 000/s
/// against 2 000/s). `process.getBuiltinModule` (Node 20.16+) reads the module only where it is handed over.
fn node_crypto_hand_over() -> String {
    format!(
        "// Node: webhook signatures are checked and bodies hashed with node:crypto (OpenSSL) by verify and verifySync,\n\
         // handed to the module before any export is used. Bun takes this entry too, but not its node:crypto: importing\n\
         // it costs a Bun cold start more than the whole verifier (tests/js/cold-start.mjs) and Bun's WebCrypto verifies\n\
         // faster; there verify uses WebCrypto and verifySync p256 in wasm, as in workerd.\n\
         import {{ {NODE_CRYPTO} }} from \"./wasm/docauto.js\";\n\n\
         if (typeof Bun === \"undefined\") {NODE_CRYPTO}(process.getBuiltinModule(\"node:crypto\"), true);"
    )
}

/// Whether the glue exports a function named `name`.
fn glue_exports(glue: &str, name: &str) -> bool {
    let declaration = format!("export function {name}(");
    glue.lines().any(|line| line.starts_with(&declaration))
}

/// Two edits to wasm-bindgen's web glue, each required to apply exactly once (a new wasm-bindgen that changes the
/// glue fails the build here rather than shipping unpatched):
/// - `initSync` accepts a `WebAssembly.Module` from another realm. It tests `module instanceof WebAssembly.Module`,
///   which is false for a module compiled in another realm (Next.js edge routes hand the `.wasm?module` import over
///   from outside their sandbox), and then tries to compile the module as bytes ("Argument 0 must be a buffer
///   source"). The brand check by `Object.prototype.toString` holds across realms.
/// - The default module URL of the async init names the module's own file (renamed from `docauto_bg.wasm`), so a
///   bundler that follows `new URL(..., import.meta.url)` in the glue finds the file the entry loads.
///
/// And in the glue of `docauto/realtime`, [`bind_transcriber`]'s two edits.
fn patch_glue(glue: &str, produced: &str, module: &str) -> Result<String, String> {
    let glue = replace_once(
        glue,
        "if (!(module instanceof WebAssembly.Module)) {",
        "if (!(module instanceof WebAssembly.Module) && Object.prototype.toString.call(module) !== \"[object WebAssembly.Module]\") {",
    )?;
    let glue = replace_once(
        &glue,
        &format!("new URL('{produced}', import.meta.url)"),
        &format!("new URL('{module}', import.meta.url)"),
    )?;
    bind_transcriber(&glue)
}

/// The glue function that hands a `RealtimeTranscriber` its own JS object (`src/wasm/realtime/mod.rs`,
/// `bind_transcriber`): the Rust side cannot reach the object wasm-bindgen's constructor makes, and holds it while
/// a session is live so that the class's `FinalizationRegistry` never frees a live transcriber.
const BIND_TRANSCRIBER: &str = "bindTranscriber";

/// Where the glue has [`BIND_TRANSCRIBER`], two edits, each required to apply exactly once: the class's constructor
/// calls it with `this` right after registering the object with its finalizer, and the function is no longer
/// exported (it is not API; the entries re-export every export of the glue). Other glues are returned as they are.
fn bind_transcriber(glue: &str) -> Result<String, String> {
    let declaration = format!("export function {BIND_TRANSCRIBER}(");
    if !glue_exports(glue, BIND_TRANSCRIBER) {
        return Ok(glue.to_owned());
    }
    let glue = replace_once(glue, &declaration, &declaration["export ".len()..])?;
    let register = "RealtimeTranscriberFinalization.register(this, this.__wbg_ptr, this);";
    replace_once(
        &glue,
        register,
        &format!("{register}\n        {BIND_TRANSCRIBER}(this, this);"),
    )
}

/// `text` with the one occurrence of `from` replaced; an error when there is none or more than one. Every edit of
/// the glue goes through it: [`patch_glue`] and the renaming of [`minify::rename_glue`].
pub(crate) fn replace_once(text: &str, from: &str, to: &str) -> Result<String, String> {
    match text.matches(from).count() {
        1 => Ok(text.replacen(from, to, 1)),
        n => Err(format!(
            "the wasm-bindgen glue holds {n} occurrences of `{from}` (expected 1): update xtask/src/build.rs \
             (patch_glue) or xtask/src/minify.rs (rename_glue) for its layout"
        )),
    }
}

/// The path (under wasm/) of the `errors.js` snippet wasm-bindgen copied, and the classes it exports.
fn error_snippet(wasm_dir: &Path) -> Result<(String, Vec<String>), String> {
    let snippets = wasm_dir.join("snippets");
    let entries =
        fs::read_dir(&snippets).map_err(|e| format!("cannot read {}: {e}", snippets.display()))?;
    for entry in entries.flatten() {
        let candidate = entry.path().join("src/wasm/errors.js");
        if candidate.exists() {
            // Each class is an `export const` (made by a pure call, so bundlers drop the unused ones).
            let classes = exported_names(&read(&candidate)?, &["class", "const"]);
            let rel = format!(
                "snippets/{}/src/wasm/errors.js",
                entry.file_name().to_string_lossy()
            );
            return Ok((rel, classes));
        }
    }
    Err("wasm-bindgen output has no snippets/*/src/wasm/errors.js".into())
}

/// Makes `node_modules/docauto` a symlink to `../pkg`, so the test runtimes resolve `"docauto"` through the
/// package's own `exports` conditions, exactly as users do.
fn link_into_node_modules(r: &Path) -> Result<(), String> {
    let nm = r.join("node_modules");
    if !nm.exists() {
        return Ok(());
    }
    let link = nm.join("docauto");
    if fs::symlink_metadata(&link).is_ok() {
        if fs::read_link(&link)
            .map(|t| t == Path::new("../pkg"))
            .unwrap_or(false)
        {
            return Ok(());
        }
        let _ = fs::remove_file(&link).or_else(|_| fs::remove_dir_all(&link));
    }
    std::os::unix::fs::symlink("../pkg", &link)
        .map_err(|e| format!("cannot link node_modules/docauto: {e}"))
}

/// Runs the npm binaryen's wasm-opt (never /usr/bin/wasm-opt, which breaks this output) in place; returns what it
/// printed (the list of names of [`minify::MINIFY`]).
pub fn wasm_opt(wasm: &Path, level: &str, options: &[&str]) -> Result<String, String> {
    let r = root();
    let tool = r.join("node_modules/.bin/wasm-opt");
    if !tool.exists() {
        return Err("node_modules/.bin/wasm-opt missing: run cargo xtask install".into());
    }
    let tmp = wasm.with_extension("opt.wasm");
    let shown = [&[level][..], options].concat().join(" ");
    step(&format!("wasm-opt {shown} (binaryen from npm)"));
    let done = util::run_capture(
        Command::new(&tool)
            .arg(level)
            .args(options)
            .args(WASM_FEATURES)
            // Custom sections no runtime reads (the toolchain's name and the target's feature list: 250 bytes).
            .args(["--strip-producers", "--strip-target-features"])
            .arg(wasm)
            .arg("-o")
            .arg(&tmp),
        Duration::from_secs(5 * 60),
        false,
    )?;
    if !done.ok() {
        return Err(format!(
            "wasm-opt {shown} failed (exit {:?}):\n{}",
            done.code, done.output
        ));
    }
    fs::rename(&tmp, wasm).map_err(|e| format!("cannot replace {}: {e}", wasm.display()))?;
    Ok(done.output)
}

/// Names declared as `export <kind> Name` at the start of a line, minus the init machinery.
fn exported_names(src: &str, kinds: &[&str]) -> Vec<String> {
    let mut names = Vec::new();
    for line in src.lines() {
        let Some(rest) = line.strip_prefix("export ") else {
            continue;
        };
        let rest = rest.strip_prefix("declare ").unwrap_or(rest);
        for kind in kinds {
            if let Some(after) = rest.strip_prefix(kind).and_then(|a| a.strip_prefix(' ')) {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                    .collect();
                if !name.is_empty() && !HIDDEN.contains(&name.as_str()) && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    names
}

fn reexport(values: &[String], types: &[String]) -> String {
    let mut items: Vec<String> = values.to_vec();
    items.extend(types.iter().map(|t| format!("type {t}")));
    format!(
        "export {{ {} }} from \"./wasm/docauto.js\";",
        items.join(", ")
    )
}

/// The package's `package.json`. `@opentelemetry/api` is an optional peer dependency: the package never imports it
/// (it finds the providers the API registered through the global the API shares across its copies), so nothing
/// installs it for the package, and a bundle without it builds; the range says which API registers what it reads.
fn package_json() -> Result<String, String> {
    let version = util::package_field("version")?;
    let description = util::package_field("description").unwrap_or_default();
    let license = util::package_field("license").unwrap_or_else(|_| "MIT OR Apache-2.0".into());
    let exports: String = ENTRIES.iter().map(|e| entry_exports(e.dir)).collect();
    // The root entry's files, then one folder per other entry.
    let mut files: Vec<String> = TEMPLATES.iter().map(|f| format!("\"{f}\"")).collect();
    files.push("\"wasm/\"".to_owned());
    files.extend(
        ENTRIES
            .iter()
            .filter(|e| !e.dir.is_empty())
            .map(|e| format!("\"{}/\"", e.dir)),
    );
    files.extend(
        DOC_FILES
            .iter()
            .filter(|f| root().join(f).exists())
            .map(|f| format!("\"{f}\"")),
    );
    if root().join(DOCS_DIR).is_dir() {
        files.push(format!("\"{DOCS_DIR}/\""));
    }
    Ok(format!(
        r#"{{
  "name": "docauto",
  "version": "{version}",
  "description": "{description}",
  "license": "{license}",
  "type": "module",
  "main": "./index.cjs",
  "module": "./index.js",
  "types": "./index.d.ts",
  "exports": {{
{exports}    "./package.json": "./package.json"
  }},
  "bin": {{
    "docauto-emulator": "./emulator/bin.js"
  }},
  "files": [
    {files}
  ],
  "sideEffects": true,
  "engines": {{
    "node": "^20.19.0 || >=22.12.0"
  }},
  "dependencies": {{
    "ws": "^8.18.0"
  }},
  "peerDependencies": {{
    "@opentelemetry/api": "^1.3.0"
  }},
  "peerDependenciesMeta": {{
    "@opentelemetry/api": {{
      "optional": true
    }}
  }}
}}
"#,
        description = json_escape(&description),
        license = json_escape(&license),
        version = json_escape(&version),
        files = files.join(",\n    "),
    ))
}

/// The `exports` entry of one entry folder ("" for the package root). Every runtime condition carries its types
/// next to its file (`{ types, default }`), so a TypeScript project with any condition set finds them; `require`
/// gets the CommonJS declaration (`index.d.cts`), `import` the ESM one: a CommonJS project under `module: node16`
/// compiles, and neither `@arethetypeswrong/cli` nor `publint` reports a problem.
fn entry_exports(dir: &str) -> String {
    let (key, prefix) = if dir.is_empty() {
        (".".to_owned(), "./".to_owned())
    } else {
        (format!("./{dir}"), format!("./{dir}/"))
    };
    let esm =
        |file: &str| format!(r#"{{ "types": "{prefix}index.d.ts", "default": "{prefix}{file}" }}"#);
    format!(
        r#"    "{key}": {{
      "workerd": {workerd},
      "edge-light": {edge},
      "deno": {deno},
      "bun": {bun},
      "node": {{
        "import": {node},
        "require": {{ "types": "{prefix}index.d.cts", "default": "{prefix}index.cjs" }}
      }},
      "browser": {browser},
      "require": {{ "types": "{prefix}index.d.cts", "default": "{prefix}index.cjs" }},
      "default": {default}
    }},
"#,
        workerd = esm("workerd.js"),
        edge = esm("edge-light.js"),
        deno = esm("deno.js"),
        bun = esm("node.js"),
        node = esm("node.js"),
        browser = esm("index.js"),
        default = esm("index.js"),
    )
}

fn json_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn read(p: &Path) -> Result<String, String> {
    fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

fn write(p: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = p.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transcriber_constructor_binds_its_object_and_the_binding_is_not_exported() {
        let glue = "export class RealtimeTranscriber {\n    constructor(options) {\n        const ret = wasm.a(options);\n        \
                    this.__wbg_ptr = ret[0];\n        \
                    RealtimeTranscriberFinalization.register(this, this.__wbg_ptr, this);\n        return this;\n    }\n}\n\
                    export function bindTranscriber(transcriber, object) {\n    wasm.b(transcriber.__wbg_ptr, object);\n}\n";
        let patched = bind_transcriber(glue).unwrap();
        assert!(patched.contains(
            "RealtimeTranscriberFinalization.register(this, this.__wbg_ptr, this);\n        bindTranscriber(this, this);\n        return this;"
        ));
        assert!(patched.contains("\nfunction bindTranscriber(transcriber, object) {"));
        assert!(!glue_exports(&patched, BIND_TRANSCRIBER));
        assert!(!exported_names(&patched, &["function"]).contains(&BIND_TRANSCRIBER.to_owned()));
        // Another module's glue is left alone; a layout without the constructor's registration fails the build.
        let other = "export class WebhookVerifier {\n}\n";
        assert_eq!(bind_transcriber(other).unwrap(), other);
        let moved = glue.replace(
            "RealtimeTranscriberFinalization.register",
            "Registry.register",
        );
        assert!(bind_transcriber(&moved).is_err());
    }

    #[test]
    fn exported_names_skip_init_machinery() {
        let js = "export class WebhookVerifier {\nexport function verifyOnce(a) {\nexport { initSync };\nexport default __wbg_init;\nexport function initSync(m) {";
        assert_eq!(
            exported_names(js, &["class", "function"]),
            vec!["WebhookVerifier", "verifyOnce"]
        );
    }
}
