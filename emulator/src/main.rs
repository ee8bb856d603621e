//! Local emulator of the Document Automation service.
fn main() {
    eprintln!("docauto-emulator: not yet written");
    std::process::exit(2);
}
