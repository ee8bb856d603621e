//! Project tasks: `cargo xtask install | build | types | test | bench [--write] | fuzz | demo | playground | emulator`.

mod bench;
mod build;
mod cold_start;
mod demo;
mod fuzz;
mod install;
mod minify;
mod page_proxy;
mod test;
mod util;
// A test only: nothing a user or contributor reads names the process of the work.
#[cfg(test)]
mod wording;
mod xvfb;

const USAGE: &str = "usage: cargo xtask <command>
  install         rustup wasm target, wasm-bindgen-cli (pinned), npm tooling, Chromium and Firefox ESR (apt, as root)
  build           build the npm package into pkg/
  types           regenerate src/wasm/generated/*.d.ts from the Rust types, build pkg/, then rewrite api.md from the
                  package's declarations (a native test and the api.md suite fail while either is stale)
  test            every suite; the last line is `N passed, N failed`
  test --docs     only the code blocks of README.md, MIGRATION.md and docs/: one line per block, then the counts
  bench [--write] sizes, cold starts and speeds against jose, openai-node and fetch (--write updates BENCHMARKS.md and PERFORMANCE.md)
  fuzz [secs]     bounded cargo-fuzz run of each target, then the wasm boundary from Node (default 30 s each)
  demo            build, start the emulator and the demo app on 127.0.0.1, print the address
  playground [--out DIR]  build, write the demo as static files that need no server (default target/playground/)
  emulator [args] run the local emulator (docauto-emulator --help for its flags)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = args.first().map(String::as_str).unwrap_or("");
    let rest = args.get(1..).unwrap_or(&[]);
    let result = match cmd {
        "install" => install::install().map(|()| true),
        "build" => install::install()
            .and_then(|()| build::build())
            .map(|()| true),
        "types" => types().map(|()| true),
        "test" if rest.iter().any(|a| a == "--docs") => test::docs(),
        "test" => test::test(),
        "bench" => install::install()
            .and_then(|()| build::build())
            .and_then(|()| bench::bench(rest.iter().any(|a| a == "--write")))
            .map(|()| true),
        "fuzz" => fuzz::fuzz(rest.first().and_then(|s| s.parse().ok()).unwrap_or(30)),
        "demo" => install::install()
            .and_then(|()| build::build())
            .and_then(|()| demo::demo())
            .map(|()| true),
        "playground" => demo::out_dir(rest).and_then(|out| {
            install::install()
                .and_then(|()| build::build())
                .and_then(|()| demo::playground(&out))
                .map(|()| true)
        }),
        "emulator" => emulator(rest),
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    match result {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("xtask {cmd}: {e}");
            std::process::exit(1);
        }
    }
}

/// `cargo xtask types`: the native test that checks the generated declarations, told to write them instead; then
/// the package is built (its declarations are made by the build) and `api.md`, the method reference, is written
/// from them by the script whose `--check` the api.md suite runs.
fn types() -> Result<(), String> {
    util::step("cargo test -p docauto --lib typegen::generated_declarations_are_fresh (DOCAUTO_WRITE_TYPES=1)");
    util::run(
        std::process::Command::new("cargo")
            .args([
                "test",
                "-p",
                "docauto",
                "--lib",
                "typegen::generated_declarations_are_fresh",
            ])
            .env("DOCAUTO_WRITE_TYPES", "1")
            .current_dir(util::root()),
        std::time::Duration::from_secs(30 * 60),
    )?;
    install::install()?;
    build::build()?;
    util::step("node tests/docs/api-reference.mjs --write (api.md from pkg/'s declarations)");
    util::run(
        std::process::Command::new("node")
            .args(["tests/docs/api-reference.mjs", "--write"])
            .current_dir(util::root()),
        std::time::Duration::from_secs(120),
    )
}

/// `cargo xtask emulator [flags]`: the emulator in the foreground; Ctrl-C reaches it (same process group).
fn emulator(args: &[String]) -> Result<bool, String> {
    let status = std::process::Command::new("cargo")
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "docauto-emulator",
            "--bin",
            "docauto-emulator",
            "--",
        ])
        .args(args)
        .current_dir(util::root())
        .status()
        .map_err(|e| format!("cannot start the emulator: {e}"))?;
    Ok(status.success() || status.code().is_none())
}
