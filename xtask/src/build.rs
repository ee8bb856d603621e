//! `cargo xtask build`: release wasm -> wasm-bindgen (web glue) -> wasm-opt -> entry files -> pkg/.

use crate::util::{self, root, step};
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The wasm-opt level: measured in BENCHMARKS.md (size and verify speed of -O2, -O3, -Oz).
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

/// Entry files copied from pkg-template/ (the `// @EXPORTS@` line is replaced by the generated re-exports).
const ENTRIES: &[&str] = &[
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
    // How the Node, Bun and Deno entries hand `node:crypto` to the webhook verifier; not part of the API.
    "__useNodeCrypto",
];

/// One wasm module of the package and the folder of its entries.
struct Variant {
    /// Folder under pkg/ ("" for the package root).
    dir: &'static str,
    /// Extra cargo arguments (features).
    cargo_args: &'static [&'static str],
    /// Cargo target dir, so the variants do not rebuild each other.
    target_dir: &'static str,
    /// Cargo profile (Cargo.toml): `release` (opt-level 3) for the modules that verify webhooks, whose speed must
    /// not drop; `wasm-size` (opt-level "s", the crypto crates at 3) for the others; `wasm-realtime` ("z") for
    /// `docauto/realtime`, whose resampler stays well above its speed floor.
    profile: &'static str,
}

/// One module per use: the whole SDK (`docauto`), the webhook verifier alone (`docauto/webhooks`, for edge functions
/// that only verify webhooks), live transcription alone (`docauto/realtime`, for a page: no API client, no
/// verifier) and the test signer alone (`docauto/testing`, for users' unit tests of their webhook handlers; they take
/// the verifier from the entry their handler uses).
const VARIANTS: &[Variant] = &[
    Variant {
        dir: "",
        cargo_args: &["--features", "talc-allocator"],
        target_dir: "target",
        profile: "release",
    },
    Variant {
        dir: "webhooks",
        cargo_args: &[
            "--no-default-features",
            "--features",
            "webhooks talc-allocator",
        ],
        target_dir: "target/webhooks",
        profile: "release",
    },
    Variant {
        dir: "realtime",
        cargo_args: &[
            "--no-default-features",
            "--features",
            "realtime talc-allocator",
        ],
        target_dir: "target/realtime",
        profile: "wasm-realtime",
    },
    Variant {
        dir: "testing",
        cargo_args: &[
            "--no-default-features",
            "--features",
            "testing talc-allocator",
        ],
        target_dir: "target/testing",
        profile: "wasm-size",
    },
];

/// Builds pkg/ from scratch.
pub fn build() -> Result<(), String> {
    let r = root();
    let pkg = r.join("pkg");
    if pkg.exists() {
        fs::remove_dir_all(&pkg).map_err(|e| format!("cannot clear pkg/: {e}"))?;
    }
    for variant in VARIANTS {
        build_variant(&r, variant)?;
    }
    build_emulator(&r)?;
    write(&pkg.join("package.json"), &package_json()?)?;
    if let Ok(readme) = fs::read_to_string(r.join("README.md")) {
        write(&pkg.join("README.md"), &readme)?;
    }
    link_into_node_modules(&r)
}

fn build_variant(r: &Path, variant: &Variant) -> Result<(), String> {
    let label = if variant.dir.is_empty() {
        "docauto".to_owned()
    } else {
        format!("docauto/{}", variant.dir)
    };
    step(&format!(
        "{label}: cargo build --profile {} --target wasm32-unknown-unknown -p docauto --lib {}",
        variant.profile,
        variant.cargo_args.join(" ")
    ));
    util::run(
        Command::new("cargo")
            .args([
                "build",
                "--profile",
                variant.profile,
                "--target",
                "wasm32-unknown-unknown",
                "-p",
                "docauto",
                "--lib",
                "--target-dir",
            ])
            .arg(r.join(variant.target_dir))
            .args(variant.cargo_args)
            .current_dir(r),
        Duration::from_secs(30 * 60),
    )?;
    let out = r.join("pkg").join(variant.dir);
    let wasm_dir = out.join("wasm");
    step(&format!(
        "{label}: wasm-bindgen --target web --remove-name-section"
    ));
    util::run(
        Command::new(r.join(".tools/bin/wasm-bindgen"))
            .arg(
                r.join(variant.target_dir)
                    .join("wasm32-unknown-unknown")
                    .join(variant.profile)
                    .join("docauto.wasm"),
            )
            .args([
                "--target",
                "web",
                "--remove-name-section",
                "--out-name",
                "docauto",
                "--out-dir",
            ])
            .arg(&wasm_dir)
            .current_dir(r),
        Duration::from_secs(5 * 60),
    )?;
    let wasm = wasm_dir.join("docauto_bg.wasm");
    wasm_opt(&wasm, WASM_OPT_LEVEL)?;
    let glue_js = read(&wasm_dir.join("docauto.js"))?;
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
    let dts_line = reexport(&values, &types);
    for name in ENTRIES {
        let src = read(&r.join("pkg-template").join(name))?;
        let line = if name.ends_with(".d.ts") {
            dts_line.clone()
        } else if name.ends_with(".d.cts") {
            // A CommonJS declaration re-exports from a CommonJS declaration (`wasm/docauto.d.cts`, below): importing
            // the ESM `.d.ts` from it is an error under `module: node16`.
            dts_line.replace("\"./wasm/docauto.js\"", "\"./wasm/docauto.cjs\"")
        } else {
            js_line.clone()
        };
        write(&out.join(name), &src.replace("// @EXPORTS@", &line))?;
    }
    write(&wasm_dir.join("docauto.d.cts"), &glue_dts)?;
    let size = fs::metadata(&wasm).map(|m| m.len()).unwrap_or(0);
    step(&format!(
        "{label}: exports {} ({} type names); docauto_bg.wasm {size} bytes",
        values.join(", "),
        types.len()
    ));
    Ok(())
}

/// The files of `docauto/emulator` (pkg-template/emulator/): hand-written entries over the emulator crate's wasm
/// build (its JS API is `createEmulator` and `startEmulator`, not the glue's exports) and the `docauto-emulator` bin.
const EMULATOR_FILES: &[&str] = &[
    "core.js",
    "serve.js",
    "index.js",
    "node.js",
    "deno.js",
    "workerd.js",
    "edge-light.js",
    "index.cjs",
    "index.d.ts",
    "index.d.cts",
    "bin.js",
];

/// The profile of the emulator's wasm (Cargo.toml `wasm-emulator`): size, not speed, is what it is judged on.
const EMULATOR_PROFILE: &str = "wasm-emulator";

/// The wasm-opt level of the emulator's module.
const EMULATOR_WASM_OPT_LEVEL: &str = "-Oz";

/// `docauto/emulator`: the emulator crate (emulator/) built for wasm32 as a cdylib, its glue, its entries and bin.
fn build_emulator(r: &Path) -> Result<(), String> {
    step(&format!(
        "docauto/emulator: cargo rustc -p docauto-emulator --lib --crate-type cdylib --profile {EMULATOR_PROFILE} --target wasm32-unknown-unknown"
    ));
    util::run(
        Command::new("cargo")
            .args([
                "rustc",
                "-p",
                "docauto-emulator",
                "--lib",
                "--crate-type",
                "cdylib",
                "--profile",
                EMULATOR_PROFILE,
                "--target",
                "wasm32-unknown-unknown",
                "--target-dir",
            ])
            .arg(r.join("target/emulator"))
            .current_dir(r),
        Duration::from_secs(30 * 60),
    )?;
    let out = r.join("pkg/emulator");
    let wasm_dir = out.join("wasm");
    step("docauto/emulator: wasm-bindgen --target web --remove-name-section");
    util::run(
        Command::new(r.join(".tools/bin/wasm-bindgen"))
            .arg(
                r.join("target/emulator/wasm32-unknown-unknown")
                    .join(EMULATOR_PROFILE)
                    .join("docauto_emulator.wasm"),
            )
            .args([
                "--target",
                "web",
                "--remove-name-section",
                "--out-name",
                "docauto-emulator",
                "--out-dir",
            ])
            .arg(&wasm_dir)
            .current_dir(r),
        Duration::from_secs(5 * 60),
    )?;
    // The module gets its own distinct name; the glue's default URL follows it.
    let wasm = wasm_dir.join("docauto-emulator.wasm");
    fs::rename(wasm_dir.join("docauto-emulator_bg.wasm"), &wasm)
        .map_err(|e| format!("cannot rename the emulator's wasm: {e}"))?;
    let _ = fs::remove_file(wasm_dir.join("docauto-emulator_bg.wasm.d.ts"));
    let glue = wasm_dir.join("docauto-emulator.js");
    write(
        &glue,
        &read(&glue)?.replace("docauto-emulator_bg.wasm", "docauto-emulator.wasm"),
    )?;
    wasm_opt(&wasm, EMULATOR_WASM_OPT_LEVEL)?;
    for name in EMULATOR_FILES {
        let src = read(&r.join("pkg-template/emulator").join(name))?;
        write(&out.join(name), &src)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs::set_permissions(out.join("bin.js"), fs::Permissions::from_mode(0o755));
    }
    let size = fs::metadata(&wasm).map(|m| m.len()).unwrap_or(0);
    step(&format!(
        "docauto/emulator: docauto-emulator.wasm {size} bytes"
    ));
    Ok(())
}

/// The path (under wasm/) of the `errors.js` snippet wasm-bindgen copied, and the classes it exports.
fn error_snippet(wasm_dir: &Path) -> Result<(String, Vec<String>), String> {
    let snippets = wasm_dir.join("snippets");
    let entries =
        fs::read_dir(&snippets).map_err(|e| format!("cannot read {}: {e}", snippets.display()))?;
    for entry in entries.flatten() {
        let candidate = entry.path().join("src/wasm/errors.js");
        if candidate.exists() {
            let classes = exported_names(&read(&candidate)?, &["class"]);
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

/// Runs the npm binaryen's wasm-opt (never /usr/bin/wasm-opt, which breaks this output) in place.
pub fn wasm_opt(wasm: &Path, level: &str) -> Result<(), String> {
    let r = root();
    let tool = r.join("node_modules/.bin/wasm-opt");
    if !tool.exists() {
        return Err("node_modules/.bin/wasm-opt missing: run cargo xtask install".into());
    }
    let tmp = wasm.with_extension("opt.wasm");
    step(&format!("wasm-opt {level} (binaryen from npm)"));
    util::run(
        Command::new(&tool)
            .arg(level)
            .args(WASM_FEATURES)
            // Custom sections no runtime reads (the toolchain's name and the target's feature list: 250 bytes).
            .args(["--strip-producers", "--strip-target-features"])
            .arg(wasm)
            .arg("-o")
            .arg(&tmp),
        Duration::from_secs(5 * 60),
    )?;
    fs::rename(&tmp, wasm).map_err(|e| format!("cannot replace {}: {e}", wasm.display()))
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

fn package_json() -> Result<String, String> {
    let version = util::package_field("version")?;
    let description = util::package_field("description").unwrap_or_default();
    let license = util::package_field("license").unwrap_or_else(|_| "MIT OR Apache-2.0".into());
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
{root}{webhooks}{realtime}{testing}{emulator}    "./package.json": "./package.json"
  }},
  "bin": {{
    "docauto-emulator": "./emulator/bin.js"
  }},
  "files": [
    "index.js",
    "index.cjs",
    "node.js",
    "deno.js",
    "workerd.js",
    "edge-light.js",
    "index.d.ts",
    "index.d.cts",
    "wasm/",
    "webhooks/",
    "realtime/",
    "testing/",
    "emulator/",
    "README.md"
  ],
  "sideEffects": true,
  "engines": {{
    "node": "^20.19.0 || >=22.12.0"
  }},
  "dependencies": {{
    "ws": "^8.18.0"
  }}
}}
"#,
        description = json_escape(&description),
        license = json_escape(&license),
        version = json_escape(&version),
        root = entry_exports(""),
        webhooks = entry_exports("webhooks"),
        realtime = entry_exports("realtime"),
        testing = entry_exports("testing"),
        emulator = entry_exports("emulator"),
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
    fn exported_names_skip_init_machinery() {
        let js = "export class WebhookVerifier {\nexport function verifyOnce(a) {\nexport { initSync };\nexport default __wbg_init;\nexport function initSync(m) {";
        assert_eq!(
            exported_names(js, &["class", "function"]),
            vec!["WebhookVerifier", "verifyOnce"]
        );
    }
}
