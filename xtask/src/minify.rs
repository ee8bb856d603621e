//! Short import and export names for a module and its glue (`cargo xtask build`, after wasm-opt).
//!
//! wasm-bindgen names every import `__wbg_<name>_<16 hex digits>` in a module `./docauto_bg.js` (and a module per
//! JS snippet), and exports the functions under their Rust names: in `docauto/webhooks` the 93 imports' and 29
//! exports' names were 6 KB of the 160 KB module, and the hashes do not compress. Binaryen's
//! `--minify-imports-and-exports-and-modules` renames them all to one or two letters, imports in one module, and
//! prints the old and new names; this file reads that list and gives the glue the same names: the keys of its import
//! object (a snippet's function becomes a member `<new>: importN.<name>`), the one module of that object, and its
//! `wasm.<export>` reads. The webhook module is 2.4 KiB gzip -9 smaller for it (measured with `cargo xtask bench`).

use crate::build::replace_once;
use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// The old and new names of one module's imports and exports.
#[derive(Debug, Default, PartialEq)]
pub struct Names {
    /// `(module, name, new name)` of each import.
    pub imports: Vec<(String, String, String)>,
    /// `(name, new name)` of each export.
    pub exports: Vec<(String, String)>,
    /// The one module every import now comes from.
    pub module: String,
}

/// wasm-opt's option that renames them (its list of names is printed on stdout).
pub const MINIFY: &str = "--minify-imports-and-exports-and-modules";

/// The names of `wasm`, which wasm-opt renamed with [`MINIFY`] and printed as `printed`; the one module of its
/// imports is read from the module itself.
pub fn names(wasm: &Path, printed: &str) -> Result<Names, String> {
    let mut names = parse_names(printed)?;
    let bytes = fs::read(wasm).map_err(|e| format!("cannot read {}: {e}", wasm.display()))?;
    let modules = import_modules(&bytes)?;
    names.module = match modules.as_slice() {
        [one] => one.clone(),
        _ => {
            return Err(format!(
                "{}: imports from {modules:?} after minifying, expected one module",
                wasm.display()
            ))
        }
    };
    Ok(names)
}

/// The list wasm-opt prints: `{ "imports": [["module", "name", "new"], ...], "exports": [["name", "new"], ...] }`,
/// one entry per line. Names are JS identifiers and module paths: no quote or backslash in them.
fn parse_names(printed: &str) -> Result<Names, String> {
    let mut names = Names::default();
    let mut section = "";
    for line in printed.lines() {
        let line = line.trim();
        if line.starts_with("\"imports\"") {
            section = "imports";
        } else if line.starts_with("\"exports\"") {
            section = "exports";
        } else if line.starts_with('[') {
            if line.contains('\\') {
                return Err(format!("wasm-opt printed an escaped name: {line}"));
            }
            let quoted: Vec<String> = line
                .split('"')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
            match (section, quoted.as_slice()) {
                ("imports", [module, name, new]) => {
                    names
                        .imports
                        .push((module.clone(), name.clone(), new.clone()))
                }
                ("exports", [name, new]) => names.exports.push((name.clone(), new.clone())),
                _ => {
                    return Err(format!(
                        "unexpected line in wasm-opt's list of names: {line}"
                    ))
                }
            }
        }
    }
    if names.imports.is_empty() || names.exports.is_empty() {
        return Err("wasm-opt printed no list of minified names".into());
    }
    Ok(names)
}

/// The distinct module names of a wasm binary's imports, in order of first use. Only function imports are read
/// (wasm-bindgen's modules import nothing else; another kind is an error, not a guess).
fn import_modules(bytes: &[u8]) -> Result<Vec<String>, String> {
    fn leb(bytes: &[u8], at: &mut usize) -> Result<usize, String> {
        let (mut value, mut shift) = (0usize, 0);
        loop {
            let byte = *bytes.get(*at).ok_or("truncated LEB128")?;
            *at += 1;
            value |= usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
            shift += 7;
            if shift > 28 {
                return Err("LEB128 too long".into());
            }
        }
    }
    fn name(bytes: &[u8], at: &mut usize) -> Result<String, String> {
        let len = leb(bytes, at)?;
        let text = bytes.get(*at..*at + len).ok_or("truncated name")?;
        *at += len;
        String::from_utf8(text.to_vec()).map_err(|_| "a name is not UTF-8".to_owned())
    }
    if bytes.get(..8) != Some(b"\0asm\x01\0\0\0") {
        return Err("not a wasm binary".into());
    }
    let mut at = 8;
    let mut modules: Vec<String> = Vec::new();
    while at < bytes.len() {
        let id = bytes[at];
        at += 1;
        let size = leb(bytes, &mut at)?;
        if id != 2 {
            at += size;
            continue;
        }
        for _ in 0..leb(bytes, &mut at)? {
            let module = name(bytes, &mut at)?;
            let field = name(bytes, &mut at)?;
            match bytes.get(at) {
                Some(0) => at += 1,
                kind => {
                    return Err(format!(
                        "import {module}.{field} is of kind {kind:?}, not a function"
                    ))
                }
            }
            leb(bytes, &mut at)?;
            if !modules.contains(&module) {
                modules.push(module);
            }
        }
        break;
    }
    Ok(modules)
}

/// The glue with the module's new names. `bg` is the module wasm-bindgen names its own imports in
/// (`./docauto_bg.js`). Each edit must apply where expected, else the build fails here (a new wasm-bindgen layout).
pub fn rename_glue(glue: &str, names: &Names, bg: &str) -> Result<String, String> {
    const OBJECT: &str = "    const import0 = {\n        __proto__: null,\n";
    let returned = format!("    return {{\n        __proto__: null,\n        \"{bg}\": import0,\n");
    let start = glue
        .find(&returned)
        .ok_or_else(|| format!("the glue's import object does not start with {returned:?}"))?;
    let end = start
        + glue[start..]
            .find("\n    };\n")
            .ok_or("the glue's import object has no end")?
        + "\n    };\n".len();
    // The namespace (`importN`) of each snippet module.
    let mut namespaces = HashMap::new();
    for line in glue[start + returned.len()..end].lines() {
        let line = line.trim();
        if let Some((module, ident)) = line.strip_prefix('"').and_then(|l| l.split_once("\": ")) {
            namespaces
                .entry(module.to_owned())
                .or_insert_with(|| ident.trim_end_matches(',').to_owned());
        }
    }
    let mut text = format!(
        "{}    return {{ __proto__: null, {}: import0 }};\n{}",
        &glue[..start],
        names.module,
        &glue[end..]
    );
    let mut members = String::new();
    for (module, name, new) in &names.imports {
        if module == bg {
            text = replace_once(
                &text,
                &format!("\n        {name}: "),
                &format!("\n        {new}: "),
            )?;
        } else {
            let namespace = namespaces
                .get(module)
                .ok_or_else(|| format!("the glue's import object has no module {module}"))?;
            members.push_str(&format!("        {new}: {namespace}.{name},\n"));
        }
    }
    let text = replace_once(&text, OBJECT, &format!("{OBJECT}{members}"))?;
    Ok(rename_reads(&text, "wasm.", &names.exports))
}

/// `text` with each `<prefix><name>` renamed where the name is a whole identifier of `renames` and the prefix does
/// not end another identifier or member (`getwasm.x`, `a.wasm.x` stay).
pub fn rename_reads(text: &str, prefix: &str, renames: &[(String, String)]) -> String {
    let map: HashMap<&str, &str> = renames
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let (head, tail) = rest.split_at(i + prefix.len());
        let before = head[..i]
            .chars()
            .next_back()
            .or_else(|| out.chars().next_back());
        let starts = !before.is_some_and(|c| ident(c) || c == '.');
        out.push_str(head);
        let len = tail.find(|c: char| !ident(c)).unwrap_or(tail.len());
        let (word, after) = tail.split_at(len);
        out.push_str(map.get(word).filter(|_| starts).copied().unwrap_or(word));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The glue's declarations with the new names in `interface InitOutput` (the raw exports, which every entry hides)
/// and nowhere else.
pub fn rename_init_output(dts: &str, names: &Names) -> Result<String, String> {
    const START: &str = "export interface InitOutput {\n";
    let start = dts
        .find(START)
        .ok_or("the glue's declarations have no interface InitOutput")?;
    let end = start
        + dts[start..]
            .find("\n}\n")
            .ok_or("the glue's interface InitOutput has no end")?;
    Ok(format!(
        "{}{}{}",
        &dts[..start],
        rename_reads(&dts[start..end], "readonly ", &names.exports),
        &dts[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRINTED: &str = r#"{
 "imports": [
  ["./docauto_bg.js", "__wbg_isView_7c4f5a7c257b3a84", "$"],
  ["./snippets/x/interop.js", "bytesOf", "b"]
 ],
 "exports": [
  ["memory", "c"],
  ["webhookverifier_new", "d"]
 ]
}"#;

    #[test]
    fn reads_the_list_wasm_opt_prints() {
        let n = parse_names(PRINTED).unwrap();
        assert_eq!(
            n.imports[1],
            (
                "./snippets/x/interop.js".into(),
                "bytesOf".into(),
                "b".into()
            )
        );
        assert_eq!(
            n.exports,
            vec![
                ("memory".into(), "c".into()),
                ("webhookverifier_new".into(), "d".into())
            ]
        );
        assert!(parse_names("warning: nothing\n").is_err());
        assert!(parse_names(" \"imports\": [\n  [\"a\", \"b\"]\n").is_err());
    }

    #[test]
    fn reads_the_modules_of_a_binary_s_imports() {
        // (import "a" "x" (func)) (import "a" "y" (func)) (import "b" "z" (func)), after a type section.
        let mut wasm = b"\0asm\x01\0\0\0\x01\x04\x01\x60\0\0".to_vec();
        let imports = [
            3u8, 1, b'a', 1, b'x', 0, 0, 1, b'a', 1, b'y', 0, 0, 1, b'b', 1, b'z', 0, 0,
        ];
        wasm.extend([2, imports.len() as u8]);
        wasm.extend(imports);
        assert_eq!(
            import_modules(&wasm).unwrap(),
            vec!["a".to_owned(), "b".to_owned()]
        );
        let table = [1u8, 1, b'a', 1, b't', 1, 0x70, 0, 0];
        let mut other = b"\0asm\x01\0\0\0".to_vec();
        other.extend([2, table.len() as u8]);
        other.extend(table);
        assert!(import_modules(&other)
            .unwrap_err()
            .contains("not a function"));
        assert!(import_modules(b"\0asm\x01\0\0\0\x02\x05\x01\x09").is_err());
    }

    #[test]
    fn renames_the_glue_s_imports_and_export_reads() {
        let glue = "let wasm;\nfunction f() { return wasm.webhookverifier_new(getwasm.memory, a.wasm.memory); }\n\
            function __wbg_get_imports() {\n    const import0 = {\n        __proto__: null,\n        \
            __wbg_isView_7c4f5a7c257b3a84: function(arg0) {\n            return wasm.memory;\n        },\n    };\n    \
            return {\n        __proto__: null,\n        \"./docauto_bg.js\": import0,\n        \
            \"./snippets/x/interop.js\": import1,\n        \"./snippets/x/interop.js\": import2,\n    };\n}\n";
        let mut names = parse_names(PRINTED).unwrap();
        names.module = "a".into();
        let out = rename_glue(glue, &names, "./docauto_bg.js").unwrap();
        assert_eq!(
            out,
            "let wasm;\nfunction f() { return wasm.d(getwasm.memory, a.wasm.memory); }\n\
            function __wbg_get_imports() {\n    const import0 = {\n        __proto__: null,\n        \
            b: import1.bytesOf,\n        $: function(arg0) {\n            return wasm.c;\n        },\n    };\n    \
            return { __proto__: null, a: import0 };\n}\n"
        );
        // A glue of another layout fails the build rather than shipping half renamed.
        assert!(rename_glue(
            &glue.replace("import0 = {", "imports = {"),
            &names,
            "./docauto_bg.js"
        )
        .is_err());
        assert!(rename_glue(glue, &names, "./other_bg.js").is_err());
    }

    #[test]
    fn renames_only_the_raw_exports_in_the_declarations() {
        let names = parse_names(PRINTED).unwrap();
        let dts = "export class A {\n  readonly memory: number;\n}\nexport interface InitOutput {\n  readonly memory: WebAssembly.Memory;\n  readonly webhookverifier_new: (a: number) => number;\n}\n";
        assert_eq!(
            rename_init_output(dts, &names).unwrap(),
            "export class A {\n  readonly memory: number;\n}\nexport interface InitOutput {\n  readonly c: WebAssembly.Memory;\n  readonly d: (a: number) => number;\n}\n"
        );
        assert!(rename_init_output("export class A {}\n", &names).is_err());
    }
}
