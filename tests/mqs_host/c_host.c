/* An independent message-queue host in C, written against MPICH's
 * mpi_interface.h (with FOR_MPI2), as a debugger would be: it reads a live
 * process's memory through /proc/PID/mem, its symbols from the ELF files
 * of its mappings (libelf), and its types from their DWARF (elfutils'
 * libdw). It loads a message-queue library, drives every entry point in the
 * documented order and prints what it gets, one line per fact:
 *
 *   version <compat> <taddr width> <version string>
 *   image <rc> <message>
 *   process <rc> <message>
 *   comm <name>|<size>|<local rank>|<unique id>|group <r0> <r1> ...
 *   op <class>|<status>|<desired local>|<desired global>|<tag wild>|<desired tag>|<desired length>|<system buffer>|<actual local>|<actual global>|<actual tag>|<actual length>|<extra text>
 *   end <rc of the last iterator call>
 *
 * With "hostile" as the last argument it then misuses the library the way
 * a careless debugger could, and prints the codes it gets back:
 *   hostile <what> <rc>
 *
 * usage: c_host LIBRARY PID RANK [hostile]
 */
#define FOR_MPI2 1
#define _GNU_SOURCE
#include <mpi_interface.h>

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_OBJECTS 256

struct object {
    char path[4096];
    uint64_t bias;
    int fd;
    Elf *elf;
    Dwarf *dwarf;
};

static struct object objects[MAX_OBJECTS];
static int n_objects;
static int mem_fd = -1;
static int global_rank;
static int fail_reads;          /* hostile: every fetch fails */

/* The opaque objects the library sees are these. */
struct mqs_image_ { mqs_image_info *info; };
struct mqs_process_ { mqs_process_info *info; struct mqs_image_ *image; struct mqs_job_ *job; };
struct mqs_job_ { mqs_job_info *info; struct mqs_process_ *process; };
struct mqs_type_ { Dwarf_Die die; };

static struct mqs_image_ the_image;
static struct mqs_process_ the_process, unknown_process;
static struct mqs_job_ the_job;

/* ---- objects of the process, from /proc/PID/maps ---- */

static void load_objects(int pid)
{
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%d/maps", pid);
    FILE *f = fopen(maps, "r");
    if (!f) {
        perror(maps);
        exit(2);
    }
    elf_version(EV_CURRENT);
    char line[8192];
    while (fgets(line, sizeof line, f) && n_objects < MAX_OBJECTS) {
        unsigned long start, end, offset;
        char perms[8], path[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &start, &end, perms, &offset, path) < 4)
            continue;
        if (path[0] != '/' || offset != 0)
            continue;
        int seen = 0;
        for (int i = 0; i < n_objects; i++)
            seen |= strcmp(objects[i].path, path) == 0;
        if (seen)
            continue;
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
        GElf_Ehdr eh;
        if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
            if (elf)
                elf_end(elf);
            close(fd);
            continue;
        }
        /* The load bias: where the first PT_LOAD went, minus where it
         * wanted to go (0 for shared objects and PIE executables). */
        uint64_t first_vaddr = UINT64_MAX;
        size_t nph;
        elf_getphdrnum(elf, &nph);
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < first_vaddr)
                first_vaddr = ph.p_vaddr & ~(uint64_t) 0xfff;
        }
        struct object *o = &objects[n_objects++];
        snprintf(o->path, sizeof o->path, "%s", path);
        o->fd = fd;
        o->elf = elf;
        o->bias = eh.e_type == ET_DYN ? start - first_vaddr : 0;
        o->dwarf = dwarf_begin(fd, DWARF_C_READ);
    }
    fclose(f);
}

/* ---- callbacks ---- */

static void *cb_malloc(size_t n) { return malloc(n); }
static void cb_free(void *p) { free(p); }
static void cb_dprints(const char *s) { fprintf(stderr, "library: %s\n", s); }
static char *cb_errorstring(int code) { return code == 1 ? "host: not found" : "host: error"; }
static void put_image_info(mqs_image *i, mqs_image_info *info) { i->info = info; }
static mqs_image_info *get_image_info(mqs_image *i) { return i->info; }
static void put_process_info(mqs_process *p, mqs_process_info *info) { p->info = info; }
static mqs_process_info *get_process_info(mqs_process *p) { return p->info; }
static void put_job_info(mqs_job *j, mqs_job_info *info) { j->info = info; }
static mqs_job_info *get_job_info(mqs_job *j) { return j->info; }

static void get_type_sizes(mqs_process *p, mqs_target_type_sizes *s)
{
    (void) p;
    s->short_size = sizeof(short);
    s->int_size = sizeof(int);
    s->long_size = sizeof(long);
    s->long_long_size = sizeof(long long);
    s->pointer_size = sizeof(void *);
}

static int find_symbol(mqs_image *image, char *name, mqs_taddr_t *out)
{
    (void) image;
    for (int i = 0; i < n_objects; i++) {
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(objects[i].elf, scn))) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
                continue;
            Elf_Data *data = elf_getdata(scn, NULL);
            size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
            for (size_t k = 0; data && k < n; k++) {
                GElf_Sym sym;
                if (!gelf_getsym(data, k, &sym) || sym.st_shndx == SHN_UNDEF)
                    continue;
                const char *s = elf_strptr(objects[i].elf, sh.sh_link, sym.st_name);
                if (s && strcmp(s, name) == 0) {
                    if (out)
                        *out = sym.st_value + objects[i].bias;
                    return mqs_ok;
                }
            }
        }
    }
    return 1;
}

static int find_function(mqs_image *image, char *name, mqs_lang_code lang, mqs_taddr_t *out)
{
    (void) lang;
    return find_symbol(image, name, out);
}

/* The DIE a typedef, const or volatile chain ends at. */
static int strip_typedefs(Dwarf_Die *die)
{
    for (int depth = 0; depth < 32; depth++) {
        int tag = dwarf_tag(die);
        if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
            return 0;
        Dwarf_Attribute a;
        if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, die))
            return -1;
    }
    return -1;
}

static struct mqs_type_ found_types[256];
static int n_found;

static mqs_type *find_type(mqs_image *image, char *name, mqs_lang_code lang)
{
    (void) image;
    (void) lang;
    for (int i = 0; i < n_objects; i++) {
        if (!objects[i].dwarf)
            continue;
        Dwarf_Off off = 0, next;
        size_t hsize;
        while (dwarf_nextcu(objects[i].dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
            Dwarf_Die cu, child;
            if (dwarf_offdie(objects[i].dwarf, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
                do {
                    int tag = dwarf_tag(&child);
                    if (tag != DW_TAG_typedef && tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
                        continue;
                    const char *n = dwarf_diename(&child);
                    if (!n || strcmp(n, name) != 0)
                        continue;
                    Dwarf_Die target = child;
                    if (strip_typedefs(&target) != 0 || dwarf_hasattr(&target, DW_AT_declaration))
                        continue;
                    if (n_found == 256)
                        return NULL;
                    found_types[n_found].die = target;
                    return &found_types[n_found++];
                } while (dwarf_siblingof(&child, &child) == 0);
            }
            off = next;
        }
    }
    return NULL;
}

/* A member's offset, looking through anonymous struct and union members. */
static int member_offset(Dwarf_Die *type, const char *name, int depth)
{
    Dwarf_Die m;
    if (depth > 8 || dwarf_child(type, &m) != 0)
        return -1;
    do {
        if (dwarf_tag(&m) != DW_TAG_member)
            continue;
        Dwarf_Word here = 0;
        Dwarf_Attribute a;
        if (dwarf_attr(&m, DW_AT_data_member_location, &a))
            dwarf_formudata(&a, &here);
        const char *n = dwarf_diename(&m);
        if (n && strcmp(n, name) == 0)
            return (int) here;
        if (!n) {
            Dwarf_Die inner;
            if (dwarf_attr_integrate(&m, DW_AT_type, &a) && dwarf_formref_die(&a, &inner)
                && strip_typedefs(&inner) == 0) {
                int r = member_offset(&inner, name, depth + 1);
                if (r >= 0)
                    return (int) here + r;
            }
        }
    } while (dwarf_siblingof(&m, &m) == 0);
    return -1;
}

static int field_offset(mqs_type *t, char *name) { return t ? member_offset(&t->die, name, 0) : -1; }
static int type_size(mqs_type *t) { return t ? dwarf_bytesize(&t->die) : -1; }

static int get_global_rank(mqs_process *p) { (void) p; return global_rank; }
static mqs_image *get_image(mqs_process *p) { return p->image; }

static int fetch_data(mqs_process *p, mqs_taddr_t addr, int size, void *buf)
{
    (void) p;
    if (fail_reads || size < 0)
        return 1;
    ssize_t got = pread(mem_fd, buf, (size_t) size, (off_t) addr);
    return got == size ? mqs_ok : 1;
}

static void target_to_host(mqs_process *p, const void *in, void *out, int size)
{
    (void) p;
    memcpy(out, in, (size_t) size);     /* a native host */
}

static mqs_job *get_process_job(mqs_process *p) { return p->job; }
static int get_process_identity(mqs_job *j) { (void) j; return global_rank; }
static mqs_process *get_process(mqs_job *j, int index) { return index == global_rank ? j->process : NULL; }

static const mqs_basic_callbacks basic = {
    cb_malloc, cb_free, cb_dprints, cb_errorstring, put_image_info, get_image_info,
    put_process_info, get_process_info, put_job_info, get_job_info,
};
static const mqs_image_callbacks image_cb = {
    get_type_sizes, find_function, find_symbol, find_type, field_offset, type_size,
};
static const mqs_process_callbacks process_cb = {
    get_global_rank, get_image, fetch_data, target_to_host, get_process_job, get_process_identity,
};
static const mqs_job_callbacks job_cb = { get_process };

/* ---- driving the library ---- */

#define LOAD(name) \
    typeof(&name) p_##name = (typeof(&name)) dlsym(lib, #name); \
    if (!p_##name) { fprintf(stderr, "missing %s\n", #name); return 3; }

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s LIBRARY PID RANK [hostile]\n", argv[0]);
        return 2;
    }
    int pid = atoi(argv[2]);
    global_rank = atoi(argv[3]);
    int hostile = argc > 4 && strcmp(argv[4], "hostile") == 0;
    char mem[64];
    snprintf(mem, sizeof mem, "/proc/%d/mem", pid);
    mem_fd = open(mem, O_RDONLY);
    if (mem_fd < 0) {
        perror(mem);
        return 2;
    }
    load_objects(pid);

    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    LOAD(mqs_version_string) LOAD(mqs_version_compatibility) LOAD(mqs_dll_taddr_width)
    LOAD(mqs_dll_error_string) LOAD(mqs_setup_basic_callbacks) LOAD(mqs_setup_image)
    LOAD(mqs_image_has_queues) LOAD(mqs_setup_process) LOAD(mqs_process_has_queues)
    LOAD(mqs_update_communicator_list) LOAD(mqs_setup_communicator_iterator)
    LOAD(mqs_get_communicator) LOAD(mqs_next_communicator) LOAD(mqs_setup_operation_iterator)
    LOAD(mqs_next_operation) LOAD(mqs_destroy_process_info) LOAD(mqs_destroy_image_info)
    typeof(&mqs_get_comm_group) p_group = (typeof(&mqs_get_comm_group)) dlsym(lib, "mqs_get_comm_group");
    typeof(&mqs_setup_job) p_setup_job = (typeof(&mqs_setup_job)) dlsym(lib, "mqs_setup_job");
    typeof(&mqs_destroy_job_info) p_destroy_job = (typeof(&mqs_destroy_job_info)) dlsym(lib, "mqs_destroy_job_info");
    typeof(&mqs_set_process_identity) p_identity = (typeof(&mqs_set_process_identity)) dlsym(lib, "mqs_set_process_identity");

    printf("version %d %d %s\n", p_mqs_version_compatibility(), p_mqs_dll_taddr_width(), p_mqs_version_string());
    if (p_mqs_dll_taddr_width() != (int) sizeof(mqs_taddr_t))
        return 4;
    p_mqs_setup_basic_callbacks(&basic);

    int rc = p_mqs_setup_image(&the_image, &image_cb);
    const char *msg = NULL;
    if (rc == mqs_ok)
        rc = p_mqs_image_has_queues(&the_image, &msg);
    printf("image %d ", rc);
    printf(msg ? msg : "(no message)", "the image");
    printf("\n");
    if (rc != mqs_ok)
        return 0;

    the_process.image = &the_image;
    the_process.job = &the_job;
    the_job.process = &the_process;
    int compat = p_mqs_version_compatibility();
    if (compat >= 3 && p_setup_job)
        p_setup_job(&the_job, &job_cb);
    rc = p_mqs_setup_process(&the_process, &process_cb);
    if (rc == mqs_ok && compat >= 3 && p_identity)
        p_identity(&the_process, global_rank);
    char *pmsg = NULL;
    if (rc == mqs_ok)
        rc = p_mqs_process_has_queues(&the_process, &pmsg);
    printf("process %d %s\n", rc, rc == mqs_ok ? "ok" : (pmsg ? pmsg : p_mqs_dll_error_string(rc)));
    if (rc != mqs_ok)
        return 0;

    rc = p_mqs_update_communicator_list(&the_process);
    if (rc != mqs_ok) {
        printf("end %d %s\n", rc, p_mqs_dll_error_string(rc));
        return 0;
    }
    rc = p_mqs_setup_communicator_iterator(&the_process);
    for (int nc = 0; rc == mqs_ok && nc < 10000; nc++) {
        mqs_communicator c;
        memset(&c, 0, sizeof c);
        rc = p_mqs_get_communicator(&the_process, &c);
        if (rc != mqs_ok)
            break;
        c.name[63] = 0;
        printf("comm %s|%ld|%ld|%#lx|group", c.name, (long) c.size, (long) c.local_rank, (unsigned long) c.unique_id);
        if (p_group && c.size > 0 && c.size <= 4096) {
            int *g = calloc((size_t) c.size, sizeof(int));
            if (g && p_group(&the_process, g) == mqs_ok)
                for (long i = 0; i < c.size; i++)
                    printf(" %d", g[i]);
            free(g);
        }
        printf("\n");
        for (int cls = mqs_pending_sends; cls <= mqs_unexpected_messages; cls++) {
            int orc = p_mqs_setup_operation_iterator(&the_process, cls);
            for (int n = 0; orc == mqs_ok && n < 1000000; n++) {
                mqs_pending_operation op;
                memset(&op, 0, sizeof op);
                orc = p_mqs_next_operation(&the_process, &op);
                if (orc != mqs_ok)
                    break;
                op.extra_text[0][63] = 0;
                printf("op %d|%d|%ld|%ld|%d|%ld|%ld|%d|%ld|%ld|%ld|%ld|%s\n", cls, op.status,
                       (long) op.desired_local_rank, (long) op.desired_global_rank, op.tag_wild,
                       (long) op.desired_tag, (long) op.desired_length, op.system_buffer,
                       (long) op.actual_local_rank, (long) op.actual_global_rank, (long) op.actual_tag,
                       (long) op.actual_length, op.extra_text[0]);
            }
        }
        rc = p_mqs_next_communicator(&the_process);
    }
    printf("end %d\n", rc);

    if (hostile) {
        mqs_communicator c;
        mqs_pending_operation op;
        /* Past the end of the list, where the vendor libraries follow NULL. */
        printf("hostile next_after_end %d\n", p_mqs_next_communicator(&the_process));
        printf("hostile get_after_end %d\n", p_mqs_get_communicator(&the_process, &c));
        /* A process the library never set up. */
        printf("hostile unknown_process %d\n", p_mqs_get_communicator(&unknown_process, &c));
        printf("hostile unknown_process_update %d\n", p_mqs_update_communicator_list(&unknown_process));
        /* NULL where a result goes, and an unknown queue. */
        p_mqs_setup_communicator_iterator(&the_process);
        printf("hostile null_communicator %d\n", p_mqs_get_communicator(&the_process, NULL));
        printf("hostile bad_op_class %d\n", p_mqs_setup_operation_iterator(&the_process, 7));
        p_mqs_setup_operation_iterator(&the_process, mqs_pending_receives);
        printf("hostile null_operation %d\n", p_mqs_next_operation(&the_process, NULL));
        (void) op;
        /* Memory that cannot be read. */
        fail_reads = 1;
        int urc = p_mqs_update_communicator_list(&the_process);
        printf("hostile failing_reads %d %s\n", urc, urc == mqs_ok ? "" : p_mqs_dll_error_string(urc));
        fail_reads = 0;
    }

    p_mqs_destroy_process_info(the_process.info);
    if (compat >= 3 && p_destroy_job && the_job.info)
        p_destroy_job(the_job.info);
    p_mqs_destroy_image_info(the_image.info);
    return 0;
}
