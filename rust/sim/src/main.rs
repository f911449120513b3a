use clap::Parser;

// mimalloc: the simulator allocates and frees a job's task lists, asks and
// containers by the million; on 50,000 Google-like jobs it cuts fifo's and
// fair's CPU time by about 15-20 % against the system allocator.
#[global_allocator]
static GLOBAL: sojourn_sim::allocator::MiMalloc = sojourn_sim::allocator::MiMalloc;

fn main() {
    sojourn_sim::allocator::keep_freed_pages();
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
