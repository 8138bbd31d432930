//! The synthetic Open MPI process: objects of every handle kind written
//! member by member where the layout table says, with the width it says,
//! in the target's byte order, and the exported symbols the resolver
//! starts from.

use std::collections::BTreeMap;

use mpidd_read::{LayoutTable, Layouts, SymbolTable, SyntheticMemory};
use mpidd_types::{ByteOrder, TargetAbi, TargetAddr};

/// Where the synthetic process's one segment starts.
pub const SYNTHETIC_BASE: u64 = 0x10_0000;
/// The segment's size: one fuzz-input segment.
pub const SYNTHETIC_SIZE: usize = 0x1_0000;
/// The object the synthetic symbols are in.
pub const SYNTHETIC_OBJECT: &str = "libmpi.so.40";

/// Every symbol a synthetic Open MPI process may define.
pub const OMPI_SYMBOLS: &[&str] = &[
    "ompi_comm_f_to_c_table",
    "ompi_group_f_to_c_table",
    "ompi_datatype_f_to_c_table",
    "ompi_errhandler_f_to_c_table",
    "ompi_op_f_to_c_table",
    "ompi_info_f_to_c_table",
    "ompi_request_f_to_c_table",
    "ompi_mpi_windows",
    "ompi_file_f_to_c_table",
    "ompi_mpi_comm_world",
    "ompi_mpi_comm_self",
    "ompi_mpi_comm_null",
    "ompi_mpi_group_empty",
    "ompi_mpi_group_null",
    "ompi_mpi_datatype_null",
    "ompi_mpi_errhandler_null",
    "ompi_mpi_errors_are_fatal",
    "ompi_mpi_errors_return",
    "ompi_mpi_op_null",
    "ompi_mpi_info_null",
    "ompi_request_null",
    "ompi_mpi_win_null",
    "ompi_mpi_file_null",
    "mca_pml_base_selected_component",
    "opal_version_string",
];

/// Builds a synthetic Open MPI process.
#[derive(Clone, Debug)]
pub struct SyntheticOmpi {
    abi: TargetAbi,
    layouts: LayoutTable,
    bytes: Vec<u8>,
    used: u64,
    symbols: SymbolTable,
    classes: BTreeMap<String, TargetAddr>,
    /// Each table's slots array and how many it holds.
    tables: BTreeMap<&'static str, (TargetAddr, TargetAddr, u64)>,
    world: Option<TargetAddr>,
}

/// What a synthetic communicator is made of.
#[derive(Clone, Debug, Default)]
pub struct CommSpec {
    /// Its name.
    pub name: String,
    /// This process's rank.
    pub rank: i64,
    /// The world rank of each member of its (local) group.
    pub members: Vec<u32>,
    /// For an intercommunicator, the remote group's members.
    pub remote: Option<Vec<u32>>,
    /// A Cartesian topology: dims, periods, this process's coords.
    pub cart: Option<(Vec<i32>, Vec<i32>, Vec<i32>)>,
    /// Attributes: (key, value) stored as C pointers.
    pub attributes: Vec<(u32, u64)>,
}

impl SyntheticOmpi {
    /// A process of `abi` laid out by `layouts` (which must answer every
    /// question of [`OMPI_HANDLE_LAYOUT`](crate::OMPI_HANDLE_LAYOUT)),
    /// with its f2c tables, the predefined objects, and the symbols that
    /// name them.
    pub fn new(abi: TargetAbi, layouts: LayoutTable) -> SyntheticOmpi {
        let mut s = SyntheticOmpi {
            abi,
            layouts,
            bytes: vec![0; SYNTHETIC_SIZE],
            used: 64,
            symbols: SymbolTable::new(),
            classes: BTreeMap::new(),
            tables: BTreeMap::new(),
            world: None,
        };
        let version = s.cstring("4.1.4");
        s.symbol("opal_version_string", version);
        let pml = s.alloc(s.size("mca_pml_base_component_t"));
        s.chars(
            pml,
            "mca_pml_base_component_t",
            "pmlm_version.mca_component_name",
            "ob1",
        );
        s.symbol("mca_pml_base_selected_component", pml);
        for table in [
            "ompi_comm_f_to_c_table",
            "ompi_group_f_to_c_table",
            "ompi_datatype_f_to_c_table",
            "ompi_errhandler_f_to_c_table",
            "ompi_op_f_to_c_table",
            "ompi_info_f_to_c_table",
            "ompi_request_f_to_c_table",
            "ompi_mpi_windows",
            "ompi_file_f_to_c_table",
        ] {
            let array = s.object("opal_pointer_array_t", "opal_pointer_array_t");
            let slots = s.alloc(32 * s.word());
            s.put(array, "opal_pointer_array_t", "addr", slots.0);
            s.tables.insert(table, (array, slots, 0));
            if table == "ompi_op_f_to_c_table" {
                // Open MPI allocates the operations' array.
                let p = s.alloc(s.word());
                s.word_at(p, array.0);
                s.symbol(table, p);
            } else {
                s.symbol(table, array);
            }
        }
        s
    }

    fn word(&self) -> u64 {
        self.abi.address_bytes() as u64
    }

    fn size(&self, ty: &str) -> u64 {
        self.layouts.size_of(ty).unwrap_or(8).clamp(8, 4096)
    }

    fn symbol(&mut self, name: &str, addr: TargetAddr) {
        self.symbols.insert(SYNTHETIC_OBJECT, name, addr, 0);
    }

    /// `n` zeroed bytes, 16-aligned.
    pub fn alloc(&mut self, n: u64) -> TargetAddr {
        let at = self.used.div_ceil(16) * 16;
        let end = at + n.max(1);
        assert!(
            end as usize <= SYNTHETIC_SIZE,
            "the synthetic segment is full"
        );
        self.used = end;
        TargetAddr(SYNTHETIC_BASE + at)
    }

    /// Writes `value` in `width` bytes of the target's order at `addr`.
    pub fn int_at(&mut self, addr: TargetAddr, width: u64, value: u64) {
        let i = (addr.0 - SYNTHETIC_BASE) as usize;
        let w = width.clamp(1, 8) as usize;
        let bytes = match self.abi.byte_order {
            ByteOrder::Little => value.to_le_bytes()[..w].to_vec(),
            ByteOrder::Big => value.to_be_bytes()[8 - w..].to_vec(),
        };
        self.bytes[i..i + w].copy_from_slice(&bytes);
    }

    fn word_at(&mut self, addr: TargetAddr, value: u64) {
        let w = self.word();
        self.int_at(addr, w, value);
    }

    /// Writes `value` into the member `path` of the `ty` at `base`, with
    /// the member's own width; a member the layout lacks is skipped.
    pub fn put(&mut self, base: TargetAddr, ty: &str, path: &str, value: u64) {
        if let Ok(m) = self.layouts.member(ty, path) {
            self.int_at(TargetAddr(base.0 + m.offset), m.size, value);
        }
    }

    /// Writes `text`, NUL-terminated and cut to fit, into the character
    /// array `path` of the `ty` at `base`.
    pub fn chars(&mut self, base: TargetAddr, ty: &str, path: &str, text: &str) {
        if let Ok(m) = self.layouts.member(ty, path) {
            let i = (base.0 + m.offset - SYNTHETIC_BASE) as usize;
            let n = text.len().min(m.size.saturating_sub(1) as usize);
            self.bytes[i..i + n].copy_from_slice(&text.as_bytes()[..n]);
        }
    }

    /// A NUL-terminated string.
    pub fn cstring(&mut self, text: &str) -> TargetAddr {
        let at = self.alloc(text.len() as u64 + 1);
        let i = (at.0 - SYNTHETIC_BASE) as usize;
        self.bytes[i..i + text.len()].copy_from_slice(text.as_bytes());
        at
    }

    /// An array of 4-byte ints.
    pub fn ints(&mut self, values: &[i32]) -> TargetAddr {
        let at = self.alloc(4 * values.len() as u64);
        for (i, v) in values.iter().enumerate() {
            self.int_at(TargetAddr(at.0 + 4 * i as u64), 4, *v as u32 as u64);
        }
        at
    }

    /// An array of pointers.
    pub fn pointers(&mut self, values: &[u64]) -> TargetAddr {
        let w = self.word();
        let at = self.alloc(w * values.len() as u64);
        for (i, v) in values.iter().enumerate() {
            self.word_at(TargetAddr(at.0 + w * i as u64), *v);
        }
        at
    }

    /// The `opal_class_t` named `name`, whose parents are `parents` (the
    /// nearest first), made once.
    pub fn class(&mut self, name: &str, parents: &[&str]) -> TargetAddr {
        if let Some(&c) = self.classes.get(name) {
            return c;
        }
        let parent = match parents.split_first() {
            Some((p, rest)) => self.class(p, rest).0,
            None => 0,
        };
        let c = self.alloc(self.size("opal_class_t"));
        let n = self.cstring(name);
        self.put(c, "opal_class_t", "cls_name", n.0);
        self.put(c, "opal_class_t", "cls_parent", parent);
        // A class is named after its type, whose size it gives.
        let size = self.layouts.size_of(name).unwrap_or(0);
        self.put(c, "opal_class_t", "cls_sizeof", size);
        self.classes.insert(name.to_string(), c);
        c
    }

    /// A new object of type `ty` and class `class` (deriving from
    /// `opal_object_t`), with one reference.
    pub fn object(&mut self, ty: &str, class: &str) -> TargetAddr {
        let chain: &[&str] = match class {
            "ompi_communicator_t" | "ompi_win_t" | "ompi_file_t" => {
                &["opal_infosubscriber_t", "opal_object_t"]
            }
            "ompi_info_t" => &["opal_info_t", "opal_list_t", "opal_object_t"],
            "ompi_datatype_t" => &["opal_datatype_t", "opal_object_t"],
            "mca_pml_base_request_t" | "ompi_grequest_t" => &[
                "ompi_request_t",
                "opal_free_list_item_t",
                "opal_list_item_t",
                "opal_object_t",
            ],
            "opal_object_t" => &[],
            _ => &["opal_object_t"],
        };
        let c = self.class(class, chain);
        let o = self.alloc(self.size(ty));
        self.put(o, "opal_object_t", "obj_class", c.0);
        self.put(o, "opal_object_t", "obj_reference_count", 1);
        o
    }

    /// Adds `object` to the pointer array `table` and writes its index
    /// into its member `f2c` of `ty`; returns the index.
    pub fn register(
        &mut self,
        table: &'static str,
        object: TargetAddr,
        ty: &str,
        f2c: &str,
    ) -> u64 {
        let (array, slots, n) = self.tables[table];
        let w = self.word();
        self.word_at(TargetAddr(slots.0 + w * n), object.0);
        self.tables.insert(table, (array, slots, n + 1));
        self.put(array, "opal_pointer_array_t", "size", n + 1);
        self.put(object, ty, f2c, n);
        n
    }

    /// A group of processes with these world ranks (as `ompi_proc_t`s),
    /// `my_rank` being this process's rank in it.
    pub fn group(&mut self, members: &[u32], my_rank: i64) -> TargetAddr {
        let mut procs = Vec::new();
        for &vpid in members {
            let p = self.object("ompi_proc_t", "ompi_proc_t");
            self.put(p, "ompi_proc_t", "super.proc_name.vpid", u64::from(vpid));
            procs.push(p.0);
        }
        let g = self.object("ompi_group_t", "ompi_group_t");
        let table = self.pointers(&procs);
        self.put(g, "ompi_group_t", "grp_proc_count", members.len() as u64);
        self.put(g, "ompi_group_t", "grp_my_rank", my_rank as u64);
        self.put(g, "ompi_group_t", "grp_proc_pointers", table.0);
        self.register(
            "ompi_group_f_to_c_table",
            g,
            "ompi_group_t",
            "grp_f_to_c_index",
        );
        g
    }

    /// An attribute hash table holding `attrs` as C pointers.
    pub fn attributes(&mut self, attrs: &[(u32, u64)]) -> TargetAddr {
        let e = "opal_hash_element_t";
        let esize = self.size(e);
        let elements = self.alloc(esize * attrs.len().max(1) as u64);
        for (i, &(key, value)) in attrs.iter().enumerate() {
            let at = TargetAddr(elements.0 + esize * i as u64);
            let kv = self.object("attribute_key_value_t", "attribute_key_value_t");
            self.put(kv, "attribute_key_value_t", "av_key", u64::from(key));
            self.put(kv, "attribute_key_value_t", "av_value", value);
            self.put(kv, "attribute_key_value_t", "av_set_from", 0);
            self.put(at, e, "valid", 1);
            self.put(at, e, "key.u32", u64::from(key));
            self.put(at, e, "value", kv.0);
        }
        let table = self.object("opal_hash_table_t", "opal_hash_table_t");
        self.put(table, "opal_hash_table_t", "ht_table", elements.0);
        self.put(
            table,
            "opal_hash_table_t",
            "ht_capacity",
            attrs.len() as u64,
        );
        table
    }

    /// A communicator; the first made is `MPI_COMM_WORLD`.
    pub fn comm(&mut self, spec: &CommSpec) -> TargetAddr {
        let c = "ompi_communicator_t";
        let comm = self.object(c, c);
        let local = self.group(&spec.members, spec.rank);
        let remote = match &spec.remote {
            Some(r) => self.group(r, -32766),
            None => local,
        };
        self.chars(comm, c, "c_name", &spec.name);
        self.put(comm, c, "c_my_rank", spec.rank as u64);
        let mut flags = if spec.remote.is_some() { 1 } else { 0 };
        self.put(comm, c, "c_local_group", local.0);
        self.put(comm, c, "c_remote_group", remote.0);
        if !spec.attributes.is_empty() {
            let h = self.attributes(&spec.attributes);
            self.put(comm, c, "c_keyhash", h.0);
        }
        if let Some((dims, periods, coords)) = &spec.cart {
            flags |= 0x100;
            let k = "mca_topo_base_comm_cart_2_2_0_t";
            let args = self.object(k, k);
            let (d, p, co) = (self.ints(dims), self.ints(periods), self.ints(coords));
            self.put(args, k, "ndims", dims.len() as u64);
            self.put(args, k, "dims", d.0);
            self.put(args, k, "periods", p.0);
            self.put(args, k, "coords", co.0);
            let m = self.object("mca_topo_base_module_t", "mca_topo_base_module_t");
            self.put(m, "mca_topo_base_module_t", "type", 0x100);
            self.put(m, "mca_topo_base_module_t", "mtc.cart", args.0);
            self.put(comm, c, "c_topo", m.0);
        }
        if self.world.is_none() {
            flags |= 0x4;
            self.world = Some(comm);
            self.symbol("ompi_mpi_comm_world", comm);
        }
        self.put(comm, c, "c_flags", flags);
        let cid = self.register("ompi_comm_f_to_c_table", comm, c, "c_f_to_c_index");
        self.put(comm, c, "c_contextid", cid);
        comm
    }

    /// `MPI_COMM_WORLD` of a 4-process job in which this one is rank 1,
    /// made on first use.
    pub fn world(&mut self) -> TargetAddr {
        match self.world {
            Some(w) => w,
            None => self.comm(&CommSpec {
                name: "MPI_COMM_WORLD".to_string(),
                rank: 1,
                members: vec![0, 1, 2, 3],
                ..CommSpec::default()
            }),
        }
    }

    /// A predefined datatype of `size` bytes named `name`.
    pub fn predefined_type(&mut self, name: &str, size: u64) -> TargetAddr {
        let d = "ompi_datatype_t";
        // Statically initialized with the class of its base.
        let t = self.object(d, "opal_datatype_t");
        self.put(t, d, "super.flags", 0x2 | 0x4 | 0x10);
        self.put(t, d, "super.size", size);
        self.put(t, d, "super.ub", size);
        self.put(t, d, "super.true_ub", size);
        self.chars(t, d, "name", name);
        self.register("ompi_datatype_f_to_c_table", t, d, "d_f_to_c_index");
        t
    }

    /// A derived datatype: `combiner` (a value of `mpi.h`'s enumeration)
    /// with these arguments; size and bounds as given.
    pub fn derived_type(
        &mut self,
        name: &str,
        combiner: u64,
        ints: &[i32],
        aints: &[u64],
        types: &[TargetAddr],
        (size, lb, ub): (u64, u64, u64),
    ) -> TargetAddr {
        let d = "ompi_datatype_t";
        let a = "ompi_datatype_args_t";
        let args = self.alloc(self.size(a));
        let (i, p, t) = (
            self.ints(ints),
            self.pointers(aints),
            self.pointers(&types.iter().map(|t| t.0).collect::<Vec<_>>()),
        );
        self.put(args, a, "create_type", combiner);
        self.put(args, a, "ci", ints.len() as u64);
        self.put(args, a, "ca", aints.len() as u64);
        self.put(args, a, "cd", types.len() as u64);
        self.put(args, a, "i", i.0);
        self.put(args, a, "a", p.0);
        self.put(args, a, "d", t.0);
        let ty = self.object(d, d);
        self.put(ty, d, "super.flags", 0x4);
        self.put(ty, d, "super.size", size);
        self.put(ty, d, "super.lb", lb);
        self.put(ty, d, "super.ub", ub);
        self.put(ty, d, "args", args.0);
        self.chars(ty, d, "name", name);
        self.register("ompi_datatype_f_to_c_table", ty, d, "d_f_to_c_index");
        ty
    }

    /// An info object with these pairs, in order.
    pub fn info(&mut self, pairs: &[(&str, &str)]) -> TargetAddr {
        let i = "ompi_info_t";
        let info = self.object(i, i);
        let list = self.layouts.member(i, "super").map_or(0, |m| m.offset)
            + self
                .layouts
                .member("opal_info_t", "super")
                .map_or(0, |m| m.offset);
        let sentinel = TargetAddr(
            info.0
                + list
                + self
                    .layouts
                    .member("opal_list_t", "opal_list_sentinel")
                    .map_or(0, |m| m.offset),
        );
        let mut prev = sentinel;
        for (k, v) in pairs {
            let e = self.object("opal_info_entry_t", "opal_info_entry_t");
            let value = self.cstring(v);
            self.put(e, "opal_info_entry_t", "ie_value", value.0);
            self.chars(e, "opal_info_entry_t", "ie_key", k);
            self.put(prev, "opal_list_item_t", "opal_list_next", e.0);
            prev = e;
        }
        self.put(prev, "opal_list_item_t", "opal_list_next", sentinel.0);
        self.register("ompi_info_f_to_c_table", info, i, "i_f_to_c_index");
        info
    }

    /// An ob1-style receive request on `comm` from `peer` with `tag`,
    /// active and incomplete.
    pub fn receive(&mut self, comm: TargetAddr, peer: i64, tag: i64) -> TargetAddr {
        let p = "mca_pml_base_request_t";
        let r = self.object(p, p);
        self.put(r, "ompi_request_t", "req_type", 0);
        self.put(r, "ompi_request_t", "req_state", 2);
        self.put(r, "ompi_request_t", "req_f_to_c_index", (-32766i64) as u64);
        self.put(r, p, "req_type", 2);
        self.put(r, p, "req_comm", comm.0);
        self.put(r, p, "req_peer", peer as u64);
        self.put(r, p, "req_tag", tag as u64);
        r
    }

    /// Everything made: the memory (as much of the segment as was used),
    /// the symbols and the layouts.
    pub fn finish(mut self) -> (SyntheticMemory, SymbolTable, LayoutTable) {
        let mut memory = SyntheticMemory::new(self.abi);
        self.bytes.truncate(self.used as usize);
        memory.map(TargetAddr(SYNTHETIC_BASE), self.bytes);
        (memory, self.symbols, self.layouts)
    }
}
