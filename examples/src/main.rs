//! `mpidd`: shows what MPI launchers and libraries expose to debuggers.
//!
//! Today it has one subcommand, `demo`, which lays a sample MPIR and MPI-2
//! debugger-interface job out in memory as several target ABIs would, reads
//! it back through `mpidd-types`, and prints what it read.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod demo;
mod demo_image;

#[derive(Parser)]
#[command(name = "mpidd", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Encode a sample MPIR/MPI2DD job for several target ABIs, decode it
    /// back and print it.
    Demo {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo { json } => demo::run(json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpidd: {e}");
            ExitCode::FAILURE
        }
    }
}
