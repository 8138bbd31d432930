/* Two libfabric endpoints with tagged traffic pending, for mpihandles' OFI
 * reader (mpihandles/tests/ofi_endpoint_live.rs): one process, one fabric
 * and domain of the provider FI_PROVIDER names (shm, or tcp, which
 * libfabric 1.17 layers under ofi_rxm for FI_EP_RDM), endpoint A and
 * endpoint B, each with its own completion queue and address vector.
 *
 * - A posts three tagged receives: an exact tag from B only (a directed
 *   receive), a masked tag from anyone, and the marker's tag;
 * - B sends A four tagged messages: 64 bytes, 3000 bytes and 1 MiB whose
 *   tags no receive matches, so A's provider keeps them as unexpected
 *   messages (the 1 MiB one also stays in flight at B, which waits for A
 *   to take its data), then an 8-byte marker that A's third receive
 *   takes;
 * - both endpoints are progressed until A's marker receive completes:
 *   both providers deliver one sender's messages in order, so the three
 *   before it are then in A's unexpected queue.
 *
 * Each endpoint's address vector holds the endpoint itself at fi_addr 0
 * and the other at 1, so every source read must be 1, never a default 0.
 *
 * It prints the addresses the test checks, then "READY", and waits.
 * Build: gcc -g -o endpoint_queues endpoint_queues.c -lfabric
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define TAG_EXACT 0x0000000100000007ull
#define TAG_MASKED 0x0000000200000000ull
#define IGNORE_MASKED 0x00000000ffffffffull
#define TAG_MARKER 0x0000000900000000ull
#define TAG_SMALL 0x0000000300000001ull
#define TAG_MEDIUM 0x0000000300000002ull
#define TAG_LARGE 0x0000000300000003ull
#define SMALL 64
#define MEDIUM 3000
#define LARGE (1u << 20)

#define CHECK(call)                                                       \
  do {                                                                    \
    int ret_ = (int)(call);                                               \
    if (ret_) {                                                           \
      fprintf(stderr, "%s: %d (%s)\n", #call, ret_, fi_strerror(-ret_)); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

static struct fid_fabric *fabric;
static struct fid_domain *domain;

struct end {
  struct fid_ep *ep;
  struct fid_cq *cq;
  struct fid_av *av;
  char name[256];
  size_t name_len;
};

static void open_end(struct fi_info *info, struct end *e) {
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED};
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  CHECK(fi_endpoint(domain, info, &e->ep, NULL));
  CHECK(fi_cq_open(domain, &cq_attr, &e->cq, NULL));
  CHECK(fi_av_open(domain, &av_attr, &e->av, NULL));
  CHECK(fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV));
  CHECK(fi_ep_bind(e->ep, &e->av->fid, 0));
  CHECK(fi_enable(e->ep));
  e->name_len = sizeof(e->name);
  CHECK(fi_getname(&e->ep->fid, e->name, &e->name_len));
}

/* Inserts `self` at fi_addr 0 and `other` at 1 of e's address vector. */
static void insert(struct end *e, struct end *self, struct end *other) {
  fi_addr_t addr[2];
  if (fi_av_insert(e->av, self->name, 1, &addr[0], 0, NULL) != 1 ||
      fi_av_insert(e->av, other->name, 1, &addr[1], 0, NULL) != 1 ||
      addr[0] != 0 || addr[1] != 1) {
    fprintf(stderr, "fi_av_insert did not give fi_addr 0 and 1\n");
    exit(1);
  }
}

static char recv_exact[100], recv_masked[200], recv_marker[8];
static char send_small[SMALL], send_medium[MEDIUM], send_marker[8];
static char *send_large;
static struct fi_context ctx_exact, ctx_masked, ctx_marker;
static struct fi_context ctx_small, ctx_medium, ctx_large, ctx_marker_send;

static int marker_done;

/* Reads one completion from each endpoint's queue, which progresses both
 * (shm's first send to a peer waits for the peer to answer, rxm's waits
 * for its connection); only the marker's receive may complete at A. */
static void progress(struct end *a, struct end *b) {
  struct fi_cq_tagged_entry c;
  if (fi_cq_read(a->cq, &c, 1) == 1) {
    if (c.op_context != &ctx_marker) {
      fprintf(stderr, "an unexpected completion at A: %p\n", c.op_context);
      exit(1);
    }
    marker_done = 1;
  }
  (void)fi_cq_read(b->cq, &c, 1);
}

static void send_tagged(struct end *a, struct end *b, void *buf, size_t len,
                        uint64_t tag, struct fi_context *ctx) {
  ssize_t ret;
  time_t deadline = time(NULL) + 20;
  while ((ret = fi_tsend(b->ep, buf, len, NULL, 1, tag, ctx)) == -FI_EAGAIN) {
    progress(a, b);
    if (time(NULL) > deadline) {
      fprintf(stderr, "fi_tsend of tag %#llx could not start\n",
              (unsigned long long)tag);
      exit(1);
    }
  }
  CHECK(ret);
}

int main(void) {
  struct fi_info *hints = fi_allocinfo(), *info;
  struct end a, b;
  hints->caps = FI_TAGGED | FI_DIRECTED_RECV;
  hints->ep_attr->type = FI_EP_RDM;
  hints->mode = FI_CONTEXT;
  hints->domain_attr->av_type = FI_AV_TABLE;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
  CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
  CHECK(fi_domain(fabric, info, &domain, NULL));
  open_end(info, &a);
  open_end(info, &b);
  insert(&a, &a, &b);
  insert(&b, &b, &a);

  CHECK(fi_trecv(a.ep, recv_exact, sizeof recv_exact, NULL, 1, TAG_EXACT, 0,
                 &ctx_exact));
  CHECK(fi_trecv(a.ep, recv_masked, sizeof recv_masked, NULL, FI_ADDR_UNSPEC,
                 TAG_MASKED, IGNORE_MASKED, &ctx_masked));
  CHECK(fi_trecv(a.ep, recv_marker, sizeof recv_marker, NULL, FI_ADDR_UNSPEC,
                 TAG_MARKER, 0, &ctx_marker));

  send_large = calloc(1, LARGE);
  send_tagged(&a, &b, send_small, SMALL, TAG_SMALL, &ctx_small);
  send_tagged(&a, &b, send_medium, MEDIUM, TAG_MEDIUM, &ctx_medium);
  send_tagged(&a, &b, send_large, LARGE, TAG_LARGE, &ctx_large);
  send_tagged(&a, &b, send_marker, sizeof send_marker, TAG_MARKER,
              &ctx_marker_send);

  /* Progress both until A's marker receive completes. */
  time_t deadline = time(NULL) + 20;
  while (!marker_done) {
    progress(&a, &b);
    if (time(NULL) > deadline) {
      fprintf(stderr, "the marker did not arrive\n");
      return 1;
    }
  }

  printf("provider %s\n", info->fabric_attr->prov_name);
  printf("info %p\n", (void *)info);
  printf("ep_a %p\n", (void *)a.ep);
  printf("ep_b %p\n", (void *)b.ep);
  printf("recv_exact %p %p\n", (void *)&ctx_exact, (void *)recv_exact);
  printf("recv_masked %p %p\n", (void *)&ctx_masked, (void *)recv_masked);
  printf("send_large %p %p\n", (void *)&ctx_large, (void *)send_large);
  printf("READY\n");
  fflush(stdout);
  for (;;)
    pause();
}
