//! The objects a symbol search went through, told short enough to read: a
//! live MPI rank maps some seventy objects, and an error that names them
//! all in one line hides the few a person needs. Up to
//! [`LIST_IN_FULL`] objects are named as they are; beyond that, the count,
//! the program, the MPI libraries, how many MPI components, and how many
//! others. The full list stays with [`SymbolSource::searched_objects`]
//! for whoever asks for it (`mpidd --verbose`).

use crate::symbols::SymbolSource;

/// Up to this many objects are named one by one.
pub const LIST_IN_FULL: usize = 10;
/// At most this many MPI libraries are named in a summary.
const MPI_NAMED: usize = 5;

/// File-name prefixes of an MPI implementation's own libraries (Open MPI's
/// libmpi, libopen-rte and libopen-pal; MPICH's libmpi and libmpich, Intel
/// MPI's libmpi and libmpifort).
const MPI_LIBRARIES: &[&str] = &["libmpi", "libopen-rte", "libopen-pal", "libpmpi"];
/// File-name prefix of Open MPI's components (`mca_pml_ob1.so`, ...).
const OMPI_COMPONENT: &str = "mca_";

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether the object at `path` is one of an MPI implementation's own
/// libraries (not one of its components).
pub fn is_mpi_library(path: &str) -> bool {
    let name = file_name(path);
    MPI_LIBRARIES.iter().any(|p| name.starts_with(p))
}

/// `names` (paths, as [`SymbolSource::searched_objects`] gives them)
/// in one short phrase: "3 objects: a, b, c" up to [`LIST_IN_FULL`], else
/// "70 objects: queues, libmpi.so.40, libopen-rte.so.40,
/// libopen-pal.so.40, 31 Open MPI components (mca_*.so) and 35 others".
/// The first object, the program, is always named.
///
/// ```
/// use mpidd_read::summarize_objects;
///
/// let mut names = vec!["/job/queues".to_string()];
/// names.extend((0..40).map(|i| format!("/usr/lib/libx{i}.so")));
/// names.push("/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4".to_string());
/// names.extend((0..30).map(|i| format!("/usr/lib/openmpi/mca_c{i}.so")));
/// assert_eq!(
///     summarize_objects(&names),
///     "72 objects: queues, libmpi.so.40.30.4, 30 Open MPI components (mca_*.so) \
///      and 40 others"
/// );
/// assert_eq!(summarize_objects(&names[..2]), "2 objects: /job/queues, /usr/lib/libx0.so");
/// ```
pub fn summarize_objects(names: &[String]) -> String {
    let n = names.len();
    let plural =
        |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    match names {
        [] => return "no objects".to_string(),
        _ if n <= LIST_IN_FULL => {
            return format!("{}: {}", plural(n, "object", "objects"), names.join(", "))
        }
        _ => {}
    }
    let mut shown = vec![file_name(&names[0]).to_string()];
    let mut libraries = 0;
    let mut components = 0;
    for name in &names[1..] {
        if is_mpi_library(name) {
            libraries += 1;
            if libraries <= MPI_NAMED {
                shown.push(file_name(name).to_string());
            }
        } else if file_name(name).starts_with(OMPI_COMPONENT) {
            components += 1;
        }
    }
    if components > 0 {
        shown.push(format!(
            "{} (mca_*.so)",
            plural(components, "Open MPI component", "Open MPI components")
        ));
    }
    let others = n - 1 - libraries.min(MPI_NAMED) - components;
    format!(
        "{n} objects: {} and {}",
        shown.join(", "),
        plural(others, "other", "others")
    )
}

/// [`summarize_objects`] of what `symbols` searched.
pub fn searched_summary(symbols: &(impl SymbolSource + ?Sized)) -> String {
    summarize_objects(&symbols.searched_objects())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_short_list_is_named_in_full() {
        let list = names(&["/usr/bin/mpiexec.hydra", "/lib/libc.so.6"]);
        assert_eq!(
            summarize_objects(&list),
            "2 objects: /usr/bin/mpiexec.hydra, /lib/libc.so.6"
        );
        assert_eq!(summarize_objects(&names(&["/a"])), "1 object: /a");
        assert_eq!(summarize_objects(&[]), "no objects");
    }

    #[test]
    fn a_long_list_names_the_program_and_the_mpi_libraries() {
        let mut list = names(&[
            "/tmp/job/queues",
            "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4",
            "/usr/lib/x86_64-linux-gnu/libopen-rte.so.40.30.2",
            "/usr/lib/x86_64-linux-gnu/libopen-pal.so.40.30.2",
        ]);
        list.extend((0..31).map(|i| format!("/usr/lib/openmpi/lib/openmpi3/mca_x{i}.so")));
        list.extend((0..35).map(|i| format!("/lib/x86_64-linux-gnu/libother{i}.so")));
        let s = summarize_objects(&list);
        assert_eq!(
            s,
            "70 objects: queues, libmpi.so.40.30.4, libopen-rte.so.40.30.2, \
             libopen-pal.so.40.30.2, 31 Open MPI components (mca_*.so) and 35 others"
        );
    }

    #[test]
    fn more_mpi_libraries_than_are_named_count_among_the_others() {
        let mut list = names(&["/bin/app"]);
        list.extend((0..8).map(|i| format!("/opt/mpi/lib/libmpi_{i}.so")));
        list.extend((0..4).map(|i| format!("/lib/lib{i}.so")));
        let s = summarize_objects(&list);
        assert!(s.starts_with("13 objects: app, libmpi_0.so,"), "{s}");
        assert!(s.contains("libmpi_4.so and 7 others"), "{s}");
        assert!(!s.contains("libmpi_5.so"), "{s}");
    }
}
