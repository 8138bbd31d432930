//! `mpidd cache`: the persistent layout cache (`mpidd_read::LayoutCache`),
//! where the layouts the decoders resolved from a library's DWARF are kept
//! per build-id, so that later runs on the same build read no DWARF; and
//! the symbol tables of large objects (`symbols/`), so that they read no
//! symbol table either.

use mpidd_read::LayoutCache;

/// What `mpidd cache` does.
#[derive(clap::Subcommand)]
pub enum CacheCommand {
    /// List the entries: the library each was made for, its build-id and
    /// size (the default).
    Show,
    /// Remove every entry.
    Clear,
}

/// The `mpidd cache` failures.
#[derive(Debug, thiserror::Error)]
pub enum CacheCliError {
    /// No cache directory can be named.
    #[error(
        "no layout cache: set MPIDD_CACHE_DIR, XDG_CACHE_HOME or HOME to say where it should be"
    )]
    NoDirectory,
    /// The directory could not be listed or cleared.
    #[error(transparent)]
    Cache(#[from] mpidd_read::CacheError),
}

/// The cache the reading commands use: the user's, unless `--no-cache`.
pub fn layout_cache(no_cache: bool) -> Option<LayoutCache> {
    if no_cache {
        None
    } else {
        LayoutCache::user()
    }
}

/// Keeps the symbol tables of large objects (a debug build's MPI library,
/// libc's debug file) in the cache's `symbols` folder, for every command:
/// a later run on the same files probes them in place of reading the
/// files' tables again. Unless `--no-cache`.
pub fn keep_symbol_indexes(no_cache: bool) {
    if let Some(cache) = layout_cache(no_cache) {
        mpidd_read::keep_symbol_indexes_in(Some(cache.symbol_index_dir()));
    }
}

/// Prints what the cache said went wrong, a line each.
pub fn print_warnings(warnings: Vec<String>) {
    for w in warnings {
        eprintln!("mpidd: warning: {w}");
    }
}

/// Runs `mpidd cache`.
pub fn run(command: Option<CacheCommand>) -> Result<(), CacheCliError> {
    let cache = LayoutCache::user().ok_or(CacheCliError::NoDirectory)?;
    match command.unwrap_or(CacheCommand::Show) {
        CacheCommand::Show => {
            let entries = cache.entries()?;
            println!(
                "layout cache {}: {} entr{}",
                cache.dir().display(),
                entries.len(),
                if entries.len() == 1 { "y" } else { "ies" }
            );
            for e in entries {
                let name = e.path.file_name().unwrap_or_default().to_string_lossy();
                match e.profile {
                    Ok(p) => {
                        let library = p.identity.objects.first();
                        println!(
                            "  {} {} {}: {} ({} types, {} bytes)",
                            p.identity.implementation,
                            p.identity.version,
                            library.map_or("?", |o| o.name.as_str()),
                            library
                                .and_then(|o| o.build_ids.first())
                                .map_or_else(|| name.to_string(), |b| format!("build-id {b}")),
                            p.layouts.len(),
                            e.bytes
                        );
                        for companion in p.identity.objects.iter().skip(1) {
                            println!(
                                "      with {} {}",
                                companion.name,
                                companion.build_ids.first().map_or("", String::as_str)
                            );
                        }
                    }
                    Err(reason) => println!("  {name}: unusable, rebuilt when needed: {reason}"),
                }
            }
        }
        CacheCommand::Clear => {
            let n = cache.clear()?;
            println!(
                "removed {n} entr{} from {}",
                if n == 1 { "y" } else { "ies" },
                cache.dir().display()
            );
        }
    }
    Ok(())
}
