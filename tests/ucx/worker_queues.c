/* A UCP worker with tagged traffic pending, for mpihandles' UCX worker
 * reader (mpihandles/tests/ucx_worker_live.rs): one process, one worker,
 * an endpoint to itself (UCX's "self" transport).
 *
 * - two receives posted and never matched: an exact tag (hashed expected
 *   queue) posted first, then a masked one (wildcard queue);
 * - five sends to itself that no receive matches, so they wait in the
 *   worker's unexpected list: a 64-byte eager send, an 8-byte synchronous
 *   send (eager-sync: its request stays pending until a receive matches),
 *   a 1 MiB send, above the rendezvous threshold the test sets
 *   (UCX_RNDV_THRESH), whose request also stays pending, and two 32 KiB
 *   sends, below that threshold but above the self transport's 8 KiB
 *   segment, so sent eagerly in fragments (the list holds the first), one
 *   of them synchronous;
 * - and a 1 MiB send whose request the program allocated itself
 *   (UCP_OP_ATTR_FIELD_REQUEST, as Open MPI's blocking sends do on their
 *   stack), which is in no pool of UCX's: only its endpoint keeps it.
 *
 * It prints the addresses the test checks, then "READY", and waits.
 * Build: gcc -g -o worker_queues worker_queues.c -lucp -lucs
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#define USER_SIZE 40
#define TAG_EXACT 0x0000000100000007ull
#define TAG_MASKED 0x0000000200000000ull
#define MASK_MASKED 0xffffffff00000000ull
#define TAG_EAGER 0x0000000300000001ull
#define TAG_SYNC 0x0000000300000002ull
#define TAG_RNDV 0x0000000300000003ull
#define TAG_MULTI 0x0000000300000004ull
#define TAG_SYNC_MULTI 0x0000000300000005ull
#define TAG_OWN 0x0000000300000006ull
#define BIG (1u << 20)
#define MEDIUM 32768

static void recv_cb(void *request, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *user_data)
{
    (void)request; (void)status; (void)info; (void)user_data;
}

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    (void)request; (void)status; (void)user_data;
}

static void die(const char *what, ucs_status_t status)
{
    fprintf(stderr, "%s: %s\n", what, ucs_status_string(status));
    exit(1);
}

static void *pending(void *req, const char *what)
{
    if (UCS_PTR_IS_ERR(req)) {
        die(what, UCS_PTR_STATUS(req));
    }
    return req;
}

int main(void)
{
    static char buf_exact[100], buf_masked[200], eager[64], sync_msg[8];
    char *big = malloc(BIG);
    ucp_config_t *config;
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *address;
    size_t address_len;
    ucp_ep_h ep;
    ucs_status_t status;

    memset(big, 7, BIG);
    status = ucp_config_read(NULL, NULL, &config);
    if (status != UCS_OK) die("ucp_config_read", status);
    ucp_params_t params = {
        .field_mask   = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_REQUEST_SIZE,
        .features     = UCP_FEATURE_TAG,
        .request_size = USER_SIZE,
    };
    status = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (status != UCS_OK) die("ucp_init", status);
    ucp_worker_params_t wparams = {
        .field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE,
    };
    status = ucp_worker_create(context, &wparams, &worker);
    if (status != UCS_OK) die("ucp_worker_create", status);
    status = ucp_worker_get_address(worker, &address, &address_len);
    if (status != UCS_OK) die("ucp_worker_get_address", status);
    ucp_ep_params_t eparams = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address    = address,
    };
    status = ucp_ep_create(worker, &eparams, &ep);
    if (status != UCS_OK) die("ucp_ep_create", status);

    ucp_request_param_t rparam = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
        .cb.recv      = recv_cb,
    };
    void *r_exact = pending(ucp_tag_recv_nbx(worker, buf_exact, sizeof(buf_exact),
                                             TAG_EXACT, UINT64_MAX, &rparam),
                            "receive (exact)");
    void *r_masked = pending(ucp_tag_recv_nbx(worker, buf_masked, sizeof(buf_masked),
                                              TAG_MASKED, MASK_MASKED, &rparam),
                             "receive (masked)");

    ucp_request_param_t sparam = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
        .cb.send      = send_cb,
    };
    void *s_eager = pending(ucp_tag_send_nbx(ep, eager, sizeof(eager), TAG_EAGER, &sparam),
                            "send (eager)");
    void *s_sync = pending(ucp_tag_send_sync_nbx(ep, sync_msg, sizeof(sync_msg), TAG_SYNC,
                                                 &sparam),
                           "send (sync)");
    void *s_rndv = pending(ucp_tag_send_nbx(ep, big, BIG, TAG_RNDV, &sparam), "send (rndv)");
    void *s_multi = pending(ucp_tag_send_nbx(ep, big, MEDIUM, TAG_MULTI, &sparam),
                            "send (multi)");
    ucp_context_attr_t attr = {.field_mask = UCP_ATTR_FIELD_REQUEST_SIZE};
    status = ucp_context_query(context, &attr);
    if (status != UCS_OK) die("ucp_context_query", status);
    /* As Open MPI's PML_UCX_REQ_ALLOCA: the user part's end. */
    char *own = malloc(attr.request_size);
    ucp_request_param_t oparam = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_REQUEST,
        .request      = own + attr.request_size,
    };
    void *s_own = pending(ucp_tag_send_nbx(ep, big, BIG, TAG_OWN, &oparam), "send (own)");
    void *s_sync_multi = pending(ucp_tag_send_sync_nbx(ep, big, MEDIUM, TAG_SYNC_MULTI,
                                                       &sparam),
                                 "send (sync multi)");
    for (int i = 0; i < 10000; i++) {
        ucp_worker_progress(worker);
    }

    printf("worker %p\n", (void *)worker);
    printf("recv_exact %p %p %zu\n", r_exact, (void *)buf_exact, sizeof(buf_exact));
    printf("recv_masked %p %p %zu\n", r_masked, (void *)buf_masked, sizeof(buf_masked));
    printf("send_eager %p\n", s_eager);
    printf("send_sync %p %p\n", s_sync, (void *)sync_msg);
    printf("send_rndv %p %p\n", s_rndv, (void *)big);
    printf("send_multi %p\n", s_multi);
    printf("send_sync_multi %p %p\n", s_sync_multi, (void *)big);
    printf("send_own %p %p\n", s_own, (void *)big);
    printf("ep %p\n", (void *)ep);
    printf("READY\n");
    fflush(stdout);
    pause();
    return 0;
}
