//! pip's MPICH wheels the tests of examples/tests/mpich_wheels.rs run:
//! each wheel's version, venv, the release family mpidd reads it through
//! and what its table row says.

use std::path::PathBuf;

/// One of pip's MPICH wheels: its version, the variable naming its venv,
/// the argument of scripts/python-envs.sh that makes the venv, and the
/// family mpidd reads it through.
pub struct Wheel {
    pub version: &'static str,
    pub venv_var: &'static str,
    pub envs_arg: &'static str,
    pub family: &'static str,
    /// The build as docs/supported-builds.md names it.
    pub build: &'static str,
    /// Where its layouts and hidden globals come from, as the table says.
    pub read_through: &'static str,
    /// Its netmods in the build's order, as MPICH states its device: the
    /// first is the one a rank runs unless told otherwise.
    pub device: &'static str,
}

pub const WHEEL_4_3: Wheel = Wheel {
    version: "4.3.2",
    venv_var: "MPIDD_PY_MPICH_VENV",
    envs_arg: "mpich",
    family: "MPICH 4.3.2 up to 4.4 (ch4:ucx ofi",
    build: "pip mpich 4.3.2, ch4:ucx (x86_64)",
    read_through: "the family MPICH 4.3.2 up to 4.4 (mpich-4.3-ch4-ucx-wheel), its hidden globals located in the file",
    device: "ch4:ucx ofi",
};

pub const WHEEL_5_0: Wheel = Wheel {
    version: "5.0.2",
    venv_var: "MPIDD_PY_MPICH5_VENV",
    envs_arg: "mpich5",
    family: "MPICH 5.0.2 up to 5.1 (ch4:ucx ofi",
    build: "pip mpich 5.0.2, ch4:ucx (x86_64)",
    read_through: "the family MPICH 5.0.2 up to 5.1 (mpich-5.0-ch4-ucx-wheel), its hidden globals located in the file",
    device: "ch4:ucx ofi",
};

/// 4.3.1: a family of its own (4.3.2 moved CH4's shared-memory globals).
pub const WHEEL_4_3_1: Wheel = Wheel {
    version: "4.3.1",
    venv_var: "MPIDD_PY_MPICH_4_3_1_VENV",
    envs_arg: "mpich-wheel 4.3.1",
    family: "MPICH 4.3.1 up to 4.3.2 (ch4:ucx ofi",
    build: "pip mpich 4.3.1, ch4:ucx (x86_64)",
    read_through: "the family MPICH 4.3.1 up to 4.3.2 (mpich-4.3.1-ch4-ucx-wheel), its hidden globals located in the file",
    device: "ch4:ucx ofi",
};

/// 5.0.1: with 5.0.0, a family of their own (5.0.2 added a member to
/// UCX's globals and one to the OFI netmod's request).
pub const WHEEL_5_0_1: Wheel = Wheel {
    version: "5.0.1",
    venv_var: "MPIDD_PY_MPICH_5_0_1_VENV",
    envs_arg: "mpich-wheel 5.0.1",
    family: "MPICH 5.0.0 up to 5.0.2 (ch4:ucx ofi",
    build: "pip mpich 5.0.1, ch4:ucx (x86_64)",
    read_through: "the family MPICH 5.0.0 up to 5.0.2 (mpich-5.0.1-ch4-ucx-wheel), its hidden globals located in the file",
    device: "ch4:ucx ofi",
};

/// 5.0.0: the same family as 5.0.1 (v5.0.0 measures the same).
pub const WHEEL_5_0_0: Wheel = Wheel {
    version: "5.0.0",
    venv_var: "MPIDD_PY_MPICH_5_0_0_VENV",
    envs_arg: "mpich-wheel 5.0.0",
    family: "MPICH 5.0.0 up to 5.0.2 (ch4:ucx ofi",
    build: "pip mpich 5.0.0, ch4:ucx (x86_64)",
    read_through: "the family MPICH 5.0.0 up to 5.0.2 (mpich-5.0.1-ch4-ucx-wheel), its hidden globals located in the file",
    device: "ch4:ucx ofi",
};

/// 4.2.3: OFI is the build's first netmod (`ch4:ofi,ucx`), so the one
/// its ranks run unless told otherwise.
pub const WHEEL_4_2_3: Wheel = Wheel {
    version: "4.2.3",
    venv_var: "MPIDD_PY_MPICH_4_2_3_VENV",
    envs_arg: "mpich-wheel 4.2.3",
    family: "MPICH 4.2.3 up to 4.3.0 (ch4:ofi ucx",
    build: "pip mpich 4.2.3, ch4:ofi (x86_64)",
    read_through: "the family MPICH 4.2.3 up to 4.3.0 (mpich-4.2.3-ch4-ofi-wheel), its hidden globals located in the file",
    device: "ch4:ofi ucx",
};

/// 4.0.3: OFI first; built with C++ and Fortran bindings, as its
/// `mpichversion` states.
pub const WHEEL_4_0_3: Wheel = Wheel {
    version: "4.0.3",
    venv_var: "MPIDD_PY_MPICH_4_0_3_VENV",
    envs_arg: "mpich-wheel 4.0.3",
    family: "MPICH 4.0.3 up to 4.1.0 (ch4:ofi ucx",
    build: "pip mpich 4.0.3, ch4:ofi (x86_64)",
    read_through: "the family MPICH 4.0.3 up to 4.1.0 (mpich-4.0.3-ch4-ofi-wheel), its hidden globals located in the file",
    device: "ch4:ofi ucx",
};

/// 4.1.3: OFI first, like 4.2.3; a family of its own.
pub const WHEEL_4_1_3: Wheel = Wheel {
    version: "4.1.3",
    venv_var: "MPIDD_PY_MPICH_4_1_3_VENV",
    envs_arg: "mpich-wheel 4.1.3",
    family: "MPICH 4.1.3 up to 4.2.0 (ch4:ofi ucx",
    build: "pip mpich 4.1.3, ch4:ofi (x86_64)",
    read_through: "the family MPICH 4.1.3 up to 4.2.0 (mpich-4.1.3-ch4-ofi-wheel), its hidden globals located in the file",
    device: "ch4:ofi ucx",
};

/// 3.4.3: OFI first, C++ and Fortran bindings, as its `mpichversion`
/// states; 3.4's CH4 keeps MPIDIG's queues per communicator.
pub const WHEEL_3_4_3: Wheel = Wheel {
    version: "3.4.3",
    venv_var: "MPIDD_PY_MPICH_3_4_3_VENV",
    envs_arg: "mpich-wheel 3.4.3",
    family: "MPICH 3.4.3 up to 3.4.4 (ch4:ofi ucx",
    build: "pip mpich 3.4.3, ch4:ofi (x86_64)",
    read_through: "the family MPICH 3.4.3 up to 3.4.4 (mpich-3.4.3-ch4-ofi-wheel), its hidden globals located in the file",
    device: "ch4:ofi ucx",
};

impl Wheel {
    /// The venv the wheel is installed in.
    pub fn venv(&self) -> PathBuf {
        let venv = std::env::var_os(self.venv_var)
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                panic!(
                    "{} is not set: make the venv with `scripts/python-envs.sh {}` \
                     (scripts/test.sh does) and export its path",
                    self.venv_var, self.envs_arg
                )
            });
        let lib = venv.join("lib/libmpi.so.12");
        assert!(
            lib.exists(),
            "{} is missing: `scripts/python-envs.sh {}` installs pip's MPICH {} wheel there",
            lib.display(),
            self.envs_arg,
            self.version
        );
        venv
    }
}
