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
    let handle = match serve(config).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("docauto-emulator: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", handle.app.config.start_lines(&handle.base_url()));
    let _ = tokio::signal::ctrl_c().await;
    if let Err(e) = handle.shutdown().await {
        eprintln!("docauto-emulator: {e}");
        std::process::exit(1);
    }
}
