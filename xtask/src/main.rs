//! Project tasks: `cargo xtask build | test | demo | bench | fuzz | emulator`.
fn main() {
    eprintln!("xtask: not yet written");
    std::process::exit(2);
}
