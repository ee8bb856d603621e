//! `docauto-emulator`: local emulator of the Document Automation service.

use docauto_emulator::{config::USAGE, serve, Config};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{USAGE}");
        return;
    }
    let config = match Config::from_args(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("docauto-emulator: {e}");
            std::process::exit(2);
        }
    };
    let keys: Vec<String> = config
        .keys
        .iter()
        .map(|k| format!("{} (org {})", k.key, k.org.as_deref().unwrap_or("<none>")))
        .collect();
    let handle = match serve(config).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("docauto-emulator: {e}");
            std::process::exit(1);
        }
    };
    println!("docauto emulator listening on {}", handle.base_url());
    // Dev keys are printed on purpose: they are local test keys the user chose or the documented default.
    println!("accepted dev keys: {}", keys.join(", "));
    let _ = tokio::signal::ctrl_c().await;
    if let Err(e) = handle.shutdown().await {
        eprintln!("docauto-emulator: {e}");
        std::process::exit(1);
    }
}
