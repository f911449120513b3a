use clap::Parser;

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = sojourn_sim::cli::Cli::parse();
    match sojourn_sim::cli::run(cli) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("sojourn: {e}");
            std::process::exit(2);
        }
    }
}
