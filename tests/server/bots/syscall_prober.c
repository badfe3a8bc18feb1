/* A managed bot in C that makes, by raw system calls, the calls its seccomp filter denies.
 *
 * Usage: syscall_prober BOT_COMMAND...
 * Each outcome goes to stderr as `PROBE name: ok` or `PROBE name: ERRNAME` (EPERM, ENOSYS...);
 * then it reports the keys /proc/keys shows it (`PROBE proc-keys: type:description,...`),
 * writes a key of its own into each keyring it can name and looks for another bot's
 * (`PROBE covert: seen N`), and execs BOT_COMMAND to play as an honest bot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEYCTL_GET_KEYRING_ID 0
#define KEY_SPEC_USER_KEYRING -4
#define KEY_SPEC_USER_SESSION_KEYRING -5
#define KEY_SPEC_SESSION_KEYRING -3
#define UFFD_USER_MODE_ONLY 1

static void report(const char *name, long result) {
    if (result >= 0)
        fprintf(stderr, "PROBE %s: ok\n", name);
    else
        fprintf(stderr, "PROBE %s: %s\n", name, strerrorname_np(errno));
}

static long clone_with(unsigned long flags) {
    long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0)
        syscall(SYS_exit, 0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    return pid;
}

static long clone3_with(uint64_t flags) {
    uint64_t args[8] = {flags, 0, 0, 0, SIGCHLD, 0, 0, 0};
    long pid = syscall(SYS_clone3, args, sizeof args);
    if (pid == 0)
        syscall(SYS_exit, 0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    return pid;
}

/* In a child, which a namespace it could enter would change for the probes after it. */
static void report_in_child(const char *name, int unshare_flags) {
    pid_t child = fork();
    if (child == 0) {
        report(name, unshare(unshare_flags));
        _exit(0);
    }
    waitpid(child, NULL, 0);
}

static void *thread_body(void *arg) { return arg; }

static void probe_other_processes(void) {
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    report("fork", child);
    long attached = ptrace(PTRACE_ATTACH, child, 0, 0);
    report("ptrace-child", attached);
    if (attached == 0)
        ptrace(PTRACE_DETACH, child, 0, 0);
    report("ptrace-parent", ptrace(PTRACE_ATTACH, getppid(), 0, 0));
    char buffer[8];
    struct iovec local = {buffer, sizeof buffer}, remote = {(void *)&local, sizeof buffer};
    report("process_vm_readv", process_vm_readv(child, &local, 1, &remote, 1, 0));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

static void probe_keys(const char *nonce) {
    report("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
    report("request_key", syscall(SYS_request_key, "user", "cardshark-planted", NULL, 0));
    char mine[64];
    snprintf(mine, sizeof mine, "cardshark-covert-%s", nonce);
    const int keyrings[] = {KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING,
                            KEY_SPEC_USER_SESSION_KEYRING};
    long added = -1;
    for (size_t i = 0; i < sizeof keyrings / sizeof *keyrings; i++) {
        added = syscall(SYS_add_key, "user", mine, "the ace of hearts", 17, keyrings[i]);
        if (added >= 0)
            break;
    }
    report("add_key", added);
    /* The other bot starts with this one: give its key time to land. */
    struct timespec pause_for = {0, 300 * 1000 * 1000};
    nanosleep(&pause_for, NULL);
    FILE *keys = fopen("/proc/keys", "r");
    char line[512], shown[4096] = "";
    int others = 0;
    while (keys != NULL && fgets(line, sizeof line, keys) != NULL) {
        char type[64], description[256];
        if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %63s %255[^:\n]", type, description) != 2)
            continue;
        if (strncmp(description, "cardshark-covert-", 17) == 0 && strcmp(description, mine) != 0)
            others++;
        size_t used = strlen(shown);
        snprintf(shown + used, sizeof shown - used, "%s%s:%s", used ? "," : "", type, description);
    }
    fprintf(stderr, "PROBE proc-keys: %s\n", keys != NULL ? shown : strerrorname_np(errno));
    if (keys != NULL)
        fclose(keys);
    fprintf(stderr, "PROBE covert: seen %d\n", others);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s BOT_COMMAND...\n", argv[0]);
        return 2;
    }
    char nonce[17] = "";
    unsigned char raw[8] = {0};
    if (getrandom(raw, sizeof raw, 0) == sizeof raw)
        for (int i = 0; i < 8; i++)
            snprintf(nonce + 2 * i, 3, "%02x", raw[i]);
    probe_keys(nonce);

    char bpf_attr[128] = {0};
    uint32_t map[4] = {2 /* BPF_MAP_TYPE_ARRAY */, 4, 4, 1};
    memcpy(bpf_attr, map, sizeof map);
    report("bpf", syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, bpf_attr, sizeof bpf_attr));

    struct perf_event_attr perf = {0};
    perf.size = sizeof perf;
    perf.type = PERF_TYPE_SOFTWARE;
    perf.config = PERF_COUNT_SW_TASK_CLOCK;
    perf.exclude_kernel = 1;
    perf.exclude_hv = 1;
    report("perf_event_open", syscall(SYS_perf_event_open, &perf, 0, -1, -1, 0));
    report("userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
    char uring_params[120] = {0};
    report("io_uring_setup", syscall(SYS_io_uring_setup, 4, uring_params));

    report_in_child("unshare-user", CLONE_NEWUSER);
    report_in_child("unshare-net", CLONE_NEWNET);
    report("clone-user", clone_with(CLONE_NEWUSER));
    report("clone-pid", clone_with(CLONE_NEWPID));
    report("clone3-user", clone3_with(CLONE_NEWUSER));
    int ns = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
    report("setns", setns(ns, 0));
    report("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
    report("umount2", umount2("/tmp", MNT_DETACH));
    report("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, "", 0));
    report("finit_module", syscall(SYS_finit_module, -1, "", 0));
    probe_other_processes();

    /* What an honest bot needs still works: a thread (clone3 falls back to clone), fork. */
    pthread_t thread;
    int created = pthread_create(&thread, NULL, thread_body, NULL);
    if (created == 0)
        pthread_join(thread, NULL);
    errno = created;
    report("thread", created == 0 ? 0 : -1);
    report("clone-plain", clone_with(0));

    execv(argv[1], argv + 1);
    fprintf(stderr, "PROBE exec: %s\n", strerrorname_np(errno));
    return 1;
}
