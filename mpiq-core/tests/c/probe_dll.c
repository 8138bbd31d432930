/* A message-queue library that exists to test the host: it calls every
 * callback the host provides and reports what it saw through the queues it
 * returns. Built by mpiq-core/tests/mqs_probe.rs against the interface
 * header that MPICH installs (mpi_interface.h), with FOR_MPI2 so the job
 * callbacks are exercised too.
 *
 * The target it reads is a synthetic process made by the test:
 *   int probe_mode;                 0 normal, 1 garbage, 2 image refused
 *   struct probe_node *probe_head;  a list of nodes, one per communicator
 * with struct probe_node described by the DWARF of probe_types.c.
 *
 * In mode 0 the first communicator, "probe", reports callback results in
 * one pending receive (see report()); each list node then becomes a
 * communicator named by the node. Mode 1 returns endless communicators and
 * operations with unterminated names. Mode 2 refuses the image.
 */
#define FOR_MPI2 1
#include <mpi_interface.h>
#include <stdio.h>
#include <string.h>

static const mqs_basic_callbacks *basic;
int probe_destroyed_images, probe_destroyed_processes, probe_destroyed_jobs;

typedef struct {
    const mqs_image_callbacks *cb;
    mqs_type *node;
    int node_size, off_next, off_tag, off_len, off_name, off_missing;
    int missing_type_is_null;
    mqs_taddr_t head_sym, mode_sym;
    int find_function_rc, find_symbol_missing_rc;
} image_info;

typedef struct {
    const mqs_process_callbacks *cb;
    int mode, rank, image_same, identity;
    mqs_target_type_sizes sizes;
    mqs_taddr_t current;        /* list node of the current communicator, 0 for "probe" */
    int at_report, ops_left, garbage_count;
    int fetch_bad_rc;
    char fetch_bad_text[64];
} process_info;

typedef struct {
    const mqs_job_callbacks *cb;
} job_info;

const char *mqs_version_string(void) { return "mpidd probe library 1"; }
int mqs_version_compatibility(void) { return MQS_INTERFACE_COMPATIBILITY; }
int mqs_dll_taddr_width(void) { return sizeof(mqs_taddr_t); }
const char *mqs_dll_error_string(int code)
{
    return code == 101 ? "probe: refused on purpose" : "probe: unknown";
}

void mqs_setup_basic_callbacks(const mqs_basic_callbacks *cb) { basic = cb; }

int mqs_setup_image(mqs_image *image, const mqs_image_callbacks *cb)
{
    image_info *info = basic->mqs_malloc_fp(sizeof *info);
    memset(info, 0, sizeof *info);
    info->cb = cb;
    info->node = cb->mqs_find_type_fp(image, "probe_node_t", mqs_lang_c);
    if (info->node) {
        info->node_size = cb->mqs_sizeof_fp(info->node);
        info->off_next = cb->mqs_field_offset_fp(info->node, "next");
        info->off_tag = cb->mqs_field_offset_fp(info->node, "tag");
        info->off_len = cb->mqs_field_offset_fp(info->node, "len");
        info->off_name = cb->mqs_field_offset_fp(info->node, "name");
        info->off_missing = cb->mqs_field_offset_fp(info->node, "no_such_member");
    }
    info->missing_type_is_null = cb->mqs_find_type_fp(image, "no_such_type_t", mqs_lang_c) == NULL;
    cb->mqs_find_symbol_fp(image, "probe_head", &info->head_sym);
    cb->mqs_find_symbol_fp(image, "probe_mode", &info->mode_sym);
    /* The vendor libraries pass NULL to ask only whether it exists. */
    info->find_function_rc = cb->mqs_find_function_fp(image, "probe_function", mqs_lang_c, NULL);
    info->find_symbol_missing_rc = cb->mqs_find_symbol_fp(image, "no_such_symbol", NULL);
    basic->mqs_put_image_info_fp(image, (mqs_image_info *) info);
    return mqs_ok;
}

int mqs_image_has_queues(mqs_image *image, const char **message)
{
    image_info *info = (image_info *) basic->mqs_get_image_info_fp(image);
    *message = "probe image %s checked";
    return info->node ? mqs_ok : 101;
}

void mqs_destroy_image_info(mqs_image_info *info)
{
    probe_destroyed_images++;
    basic->mqs_free_fp(info);
}

int mqs_setup_job(mqs_job *job, const mqs_job_callbacks *cb)
{
    job_info *info = basic->mqs_malloc_fp(sizeof *info);
    info->cb = cb;
    basic->mqs_put_job_info_fp(job, (mqs_job_info *) info);
    return mqs_ok;
}

int mqs_destroy_job_info(mqs_job_info *info)
{
    probe_destroyed_jobs++;
    basic->mqs_free_fp(info);
    return mqs_ok;
}

int mqs_set_process_identity(mqs_process *process, int identity)
{
    process_info *p = (process_info *) basic->mqs_get_process_info_fp(process);
    p->identity = identity;
    return mqs_ok;
}

static int fetch_int(mqs_process *process, process_info *p, mqs_taddr_t addr, int *out)
{
    char raw[16];
    int rc = p->cb->mqs_fetch_data_fp(process, addr, p->sizes.int_size, raw);
    if (rc == mqs_ok)
        p->cb->mqs_target_to_host_fp(process, raw, out, p->sizes.int_size);
    return rc;
}

static int fetch_word(mqs_process *process, process_info *p, mqs_taddr_t addr, int size,
                      mqs_taddr_t *out)
{
    char raw[16];
    *out = 0;
    int rc = p->cb->mqs_fetch_data_fp(process, addr, size, raw);
    if (rc != mqs_ok)
        return rc;
    if (size == 4) {
        unsigned int v;
        p->cb->mqs_target_to_host_fp(process, raw, &v, 4);
        *out = v;
    } else {
        unsigned long long v;
        p->cb->mqs_target_to_host_fp(process, raw, &v, 8);
        *out = (mqs_taddr_t) v;
    }
    return mqs_ok;
}

int mqs_setup_process(mqs_process *process, const mqs_process_callbacks *cb)
{
    process_info *p = basic->mqs_malloc_fp(sizeof *p);
    memset(p, 0, sizeof *p);
    p->cb = cb;
    basic->mqs_put_process_info_fp(process, (mqs_process_info *) p);
    mqs_image *image = cb->mqs_get_image_fp(process);
    image_info *info = (image_info *) basic->mqs_get_image_info_fp(image);
    info->cb->mqs_get_type_sizes_fp(process, &p->sizes);
    p->rank = cb->mqs_get_global_rank_fp(process);
    p->image_same = image != NULL && info != NULL;
    fetch_int(process, p, info->mode_sym, &p->mode);
    /* One read that must fail: the page at 16 is never mapped. */
    char scratch[8];
    p->fetch_bad_rc = cb->mqs_fetch_data_fp(process, 16, 8, scratch);
    snprintf(p->fetch_bad_text, sizeof p->fetch_bad_text, "%s",
             basic->mqs_errorstring_fp(p->fetch_bad_rc));
    mqs_job *job = cb->mqs_get_process_job_fp(process);
    if (job) {
        job_info *j = (job_info *) basic->mqs_get_job_info_fp(job);
        if (j && j->cb->mqs_get_process_fp(job, p->rank) != process)
            p->identity = -100;
    }
    return mqs_ok;
}

int mqs_process_has_queues(mqs_process *process, char **message)
{
    process_info *p = (process_info *) basic->mqs_get_process_info_fp(process);
    *message = NULL;
    return p->mode == 2 ? 101 : mqs_ok;
}

void mqs_destroy_process_info(mqs_process_info *info)
{
    probe_destroyed_processes++;
    basic->mqs_free_fp(info);
}

int mqs_update_communicator_list(mqs_process *process)
{
    (void) process;
    return mqs_ok;
}

int mqs_setup_communicator_iterator(mqs_process *process)
{
    process_info *p = (process_info *) basic->mqs_get_process_info_fp(process);
    p->at_report = 1;
    p->current = 0;
    p->garbage_count = 0;
    return mqs_ok;
}

int mqs_get_communicator(mqs_process *process, mqs_communicator *comm)
{
    process_info *p = (process_info *) basic->mqs_get_process_info_fp(process);
    mqs_image *image = p->cb->mqs_get_image_fp(process);
    image_info *info = (image_info *) basic->mqs_get_image_info_fp(image);
    if (p->mode == 1) {
        memset(comm->name, 'A', sizeof comm->name);       /* no terminator */
        comm->size = 4;
        comm->local_rank = (mqs_tword_t) (unsigned int) -1;   /* zero-extended -1 */
        comm->unique_id = (mqs_taddr_t) p->garbage_count;
        return mqs_ok;
    }
    if (p->at_report) {
        strcpy(comm->name, "probe");
        comm->unique_id = 0;
        comm->local_rank = p->rank;
        comm->size = info->node_size;
        return mqs_ok;
    }
    int tag;
    mqs_taddr_t len;
    fetch_int(process, p, p->current + info->off_tag, &tag);
    fetch_word(process, p, p->current + info->off_len, p->sizes.long_size, &len);
    char name[64] = { 0 };
    p->cb->mqs_fetch_data_fp(process, p->current + info->off_name, 12, name);
    name[12] = 0;
    strcpy(comm->name, name);
    comm->unique_id = p->current;
    comm->local_rank = (mqs_tword_t) (unsigned int) tag;  /* zero-extended, as vendors do */
    comm->size = (mqs_tword_t) len;
    return mqs_ok;
}

int mqs_get_comm_group(mqs_process *process, int *group)
{
    mqs_communicator comm;
    mqs_get_communicator(process, &comm);
    for (int i = 0; i < comm.size && i < 8; i++)
        group[i] = 10 + i;
    return mqs_ok;
}

int mqs_next_communicator(mqs_process *process)
{
    process_info *p = (process_info *) basic->mqs_get_process_info_fp(process);
    mqs_image *image = p->cb->mqs_get_image_fp(process);
    image_info *info = (image_info *) basic->mqs_get_image_info_fp(image);
    if (p->mode == 1) {
        p->garbage_count++;
        return mqs_ok;          /* never ends */
    }
    mqs_taddr_t next;
    if (p->at_report) {
        p->at_report = 0;
        fetch_word(process, p, info->head_sym, p->sizes.pointer_size, &next);
    } else {
        fetch_word(process, p, p->current + info->off_next, p->sizes.pointer_size, &next);
    }
    p->current = next;
    return next ? mqs_ok : mqs_end_of_list;
}

int mqs_setup_operation_iterator(mqs_process *process, int op)
{
    process_info *p = (process_info *) basic->mqs_get_process_info_fp(process);
    if (p->mode == 1) {
        p->ops_left = -1;
        return mqs_ok;
    }
    if (!p->at_report)
        return op == mqs_pending_sends ? mqs_no_information : mqs_end_of_list;
    if (op != mqs_pending_receives)
        return mqs_end_of_list;
    p->ops_left = 1;
    return mqs_ok;
}

int mqs_next_operation(mqs_process *process, mqs_pending_operation *op)
{
    process_info *p = (process_info *) basic->mqs_get_process_info_fp(process);
    mqs_image *image = p->cb->mqs_get_image_fp(process);
    image_info *info = (image_info *) basic->mqs_get_image_info_fp(image);
    if (p->mode == 1) {
        memset(op, 'B', sizeof *op);
        return mqs_ok;          /* never ends */
    }
    if (p->ops_left <= 0)
        return mqs_end_of_list;
    p->ops_left--;
    op->status = mqs_st_matched;
    op->desired_local_rank = info->off_tag;
    op->desired_global_rank = info->off_next;
    op->tag_wild = info->missing_type_is_null;
    op->desired_tag = info->off_missing;
    op->desired_length = p->sizes.long_size;
    op->system_buffer = p->image_same;
    op->buffer = info->head_sym;
    op->actual_local_rank = p->sizes.pointer_size;
    op->actual_global_rank = p->sizes.int_size;
    op->actual_tag = (mqs_tword_t) (unsigned int) -2;      /* zero-extended -2 */
    op->actual_length = p->identity;
    snprintf(op->extra_text[0], 64, "find_function=%d", info->find_function_rc);
    snprintf(op->extra_text[1], 64, "missing_symbol=%d", info->find_symbol_missing_rc);
    snprintf(op->extra_text[2], 64, "bad_fetch=%d %s", p->fetch_bad_rc, p->fetch_bad_text);
    snprintf(op->extra_text[3], 64, "sizes=%d,%d,%d,%d,%d off_len=%d off_name=%d",
             p->sizes.short_size, p->sizes.int_size, p->sizes.long_size,
             p->sizes.long_long_size, p->sizes.pointer_size, info->off_len, info->off_name);
    op->extra_text[4][0] = 0;
    return mqs_ok;
}
