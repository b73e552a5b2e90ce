# shellcheck shell=bash
# The commit series scripts/make-kernel-tree puts on top of Debian's linux-source-6.1.
#
# Each kseries_NN function edits files under $KSERIES_DIR and sets KSERIES_AUTHOR and
# KSERIES_MESSAGE; make-kernel-tree commits the result with a fixed date. Every commit builds
# with tinyconfig + configs/kconfig/qemu-x86_64.config (comments, docs, drivers that config
# does not build, harmless code). One commit (KSERIES_PLANTED) adds busy work to every page
# fault, which slows the bench-core `page_fault` benchmark down clearly even under TCG noise;
# `syscall` (getppid) is not affected, so it doubles as a control.
#
# Bump KSERIES_VERSION whenever anything here changes: it invalidates the cached tree.

KSERIES_VERSION=1
KSERIES_EPOCH=1704067200 # 2024-01-01T00:00:00Z
# Rounds of address mixing the planted commit does per page fault (~5 instructions each). 1536 gave
# only about -20% page_fault ops/s under TCG with +-15% noise; 6144 makes the step unmistakable.
KSERIES_PLANTED_ROUNDS=${KSERIES_PLANTED_ROUNDS:-6144}
KSERIES_VERSION="$KSERIES_VERSION.$KSERIES_PLANTED_ROUNDS"

k_alice="Alice Archer <alice.archer@example.org>"
k_bob="Bob Brenner <bob.brenner@example.org>"
k_chen="Chen Wei <chen.wei@example.com>"
k_dana="Dana Doyle <dana.doyle@example.net>"
k_emil="Emil Ekberg <emil.ekberg@example.com>"

kseries_die() { echo "make-kernel-tree: error: $*" >&2; exit 1; }

# Inserts TEXT (may span lines) before the first line of FILE matching the ERE REGEX.
kseries_insert_before() {
  local file=$KSERIES_DIR/$1 regex=$2 text=$3
  grep -Eq -- "$regex" "$file" || kseries_die "$1: no line matches /$regex/"
  TEXT=$text RE=$regex awk '!done && $0 ~ ENVIRON["RE"] { print ENVIRON["TEXT"]; done = 1 } { print }' \
    "$file" >"$file.kseries" && mv "$file.kseries" "$file"
}

# Inserts TEXT after the first line of FILE matching the ERE REGEX.
kseries_insert_after() {
  local file=$KSERIES_DIR/$1 regex=$2 text=$3
  grep -Eq -- "$regex" "$file" || kseries_die "$1: no line matches /$regex/"
  TEXT=$text RE=$regex awk '{ print } !done && $0 ~ ENVIRON["RE"] { print ENVIRON["TEXT"]; done = 1 }' \
    "$file" >"$file.kseries" && mv "$file.kseries" "$file"
}

# Appends TEXT as new lines at the end of FILE.
kseries_append() {
  [[ -f $KSERIES_DIR/$1 ]] || kseries_die "$1: no such file"
  printf '%s\n' "$2" >>"$KSERIES_DIR/$1"
}

# Sets the commit's author and message ("subject", then body paragraphs, then a sign-off).
kseries_meta() {
  local author=$1 subject=$2 body=$3
  KSERIES_AUTHOR=$author
  KSERIES_MESSAGE="$subject

$body

Signed-off-by: $author"
}

kseries_01() {
  kseries_append Documentation/admin-guide/sysctl/vm.rst "
Note that most of these values are only hints: the kernel may round them to page or
batch granularity, and reading a value back shows the value in effect."
  kseries_meta "$k_alice" "docs: sysctl/vm: note that values are rounded" \
    "Readers keep asking why a value read back differs from what they wrote."
}

kseries_02() {
  kseries_insert_before kernel/fork.c '^pid_t kernel_clone' "/*
 * kernel_clone() is the single entry point behind fork(), vfork(), clone() and clone3();
 * the per-call differences live entirely in @args.
 */"
  kseries_meta "$k_bob" "fork: document kernel_clone() as the common entry point" \
    "A comment only; no functional change."
}

kseries_03() {
  kseries_insert_before drivers/net/ethernet/intel/e1000/e1000_main.c '^static int e1000_probe\(struct pci_dev \*pdev, const struct pci_device_id \*ent\)$' \
    "/* Probe order matters on dual-port boards: port 0 must be set up first. */"
  kseries_meta "$k_chen" "e1000: explain the probe ordering on dual-port boards" "Comment only."
}

kseries_04() {
  kseries_insert_before kernel/exit.c '^void __noreturn do_exit' "/* Everything below runs with the task still visible in /proc until exit_notify(). */"
  kseries_meta "$k_dana" "exit: note when the exiting task disappears from /proc" "No functional change."
}

kseries_05() {
  kseries_append Documentation/process/submitting-patches.rst "
When a performance robot reports a regression on your patch, reply to its mail with the
numbers you see locally; it helps the robot's owners tune their noise thresholds."
  kseries_meta "$k_emil" "docs: submitting-patches: replying to performance robots" \
    "Ask developers to answer robot reports with their own numbers."
}

kseries_06() {
  kseries_insert_before mm/mmap.c '^unsigned long do_mmap' "/* The caller must hold mmap_lock for writing; see mmap_region() for the VMA merge rules. */"
  kseries_meta "$k_alice" "mm/mmap: state the locking rule above do_mmap()" "Comment only."
}

kseries_07() {
  kseries_insert_before drivers/gpu/drm/drm_file.c '^int drm_open\(' "/* drm_open() may race with hot-unplug; drm_dev_enter() below guards against it. */"
  kseries_meta "$k_bob" "drm/file: comment on the unplug race in drm_open()" "Comment only."
}

kseries_08() {
  kseries_insert_before fs/namei.c '^int path_pts' "/* Used by devpts to find its own mount; never returns a negative dentry. */"
  kseries_meta "$k_chen" "namei: document path_pts()" "No functional change."
}

kseries_09() {
  kseries_append lib/sort.c "
/* The swap helpers above assume 8-byte words for their fast path. */
_Static_assert(sizeof(u64) == 8, \"u64 must be 8 bytes\");"
  kseries_meta "$k_dana" "lib/sort: assert the word size the swap helpers rely on" \
    "Make the fast-path assumption explicit so a port that breaks it fails to build."
}

kseries_10() {
  kseries_insert_before kernel/sched/core.c '^int wake_up_process' "/* Wakes @p from any sleeping state except TASK_STOPPED/TASK_TRACED. */"
  kseries_meta "$k_emil" "sched/core: spell out which states wake_up_process() handles" "Comment only."
}

kseries_11() {
  kseries_insert_before sound/core/pcm.c '^int snd_pcm_new\(' "/* Both substream counts may be zero for a capture-only or playback-only device. */"
  kseries_meta "$k_alice" "ALSA: pcm: note that substream counts may be zero" "Comment only."
}

kseries_12() {
  kseries_insert_before fs/read_write.c '^ssize_t ksys_read' "/* Shared by read(2) and the compat entry points; @buf is a user pointer. */"
  kseries_meta "$k_bob" "fs: document ksys_read()" "No functional change."
}

kseries_13() {
  kseries_insert_before mm/page_alloc.c '^void __free_pages\(' "/* Frees a high-order page; the pages must not be referenced afterwards. */"
  kseries_meta "$k_chen" "mm/page_alloc: comment __free_pages()" "Comment only."
}

kseries_14() {
  kseries_insert_before drivers/usb/core/hub.c '^int usb_hub_init\(' "/* Registers the hub driver and starts hub_wq; called once at USB core init. */"
  kseries_meta "$k_dana" "usb: hub: document usb_hub_init()" "Comment only."
}

kseries_15() {
  kseries_insert_before fs/exec.c '^int kernel_execve' "/* Used by the kernel to start init and usermode helpers; @argv and @envp are kernel pointers. */"
  kseries_meta "$k_emil" "exec: document kernel_execve() pointer kinds" "No functional change."
}

kseries_16() {
  kseries_insert_before kernel/sys.c '^SYSCALL_DEFINE0\(getpid\)' "/* getpid() returns the thread group id, as seen from the caller's pid namespace. */"
  kseries_meta "$k_alice" "sys: clarify what getpid() returns in a pid namespace" "Comment only."
}

kseries_17() {
  kseries_insert_before fs/ext4/super.c '^static int ext4_fill_super\(' "/* Mount-time checks live in __ext4_fill_super(); this wrapper only sets up the context. */"
  kseries_meta "$k_bob" "ext4: explain the ext4_fill_super() wrapper" "Comment only."
}

kseries_18() {
  kseries_insert_before lib/kstrtox.c '^int kstrtoull' "/* Accepts a leading '+' but not '-'; see kstrtoll() for signed input. */"
  kseries_meta "$k_chen" "lib/kstrtox: note sign handling of kstrtoull()" "No functional change."
}

kseries_19() {
  kseries_append Documentation/mm/balance.rst "
Benchmarks that fault in fresh anonymous memory in a loop (page_fault1 of will-it-scale,
for instance) are a good way to see the cost of any change to this path."
  kseries_meta "$k_dana" "docs: mm/balance: point to fault benchmarks" \
    "Mention a simple way to measure changes to the fault path."
}

kseries_20() {
  kseries_insert_before kernel/panic.c '^void panic\(' "/* panic() never returns; with panic=-1 on the command line the machine reboots at once. */"
  kseries_meta "$k_emil" "panic: document the panic=-1 behaviour" "Comment only."
}

kseries_21() {
  kseries_insert_before net/ipv4/tcp.c '^void tcp_init_sock' "/* Defaults set here can be overridden per socket through setsockopt(). */"
  kseries_meta "$k_alice" "tcp: comment tcp_init_sock() defaults" "Comment only."
}

# The planted regression: a per-fault loop in handle_mm_fault().
kseries_22() {
  kseries_insert_after mm/memory.c '^#endif /\* CONFIG_LRU_GEN \*/' "
/*
 * Fold the faulting address into a locality key, so that fault locality
 * can be reported per mm later on.
 */
static noinline void mm_account_fault_locality(unsigned long address)
{
	static unsigned long fault_locality_key;
	unsigned long key = address >> PAGE_SHIFT;
	int i;

	for (i = 0; i < $KSERIES_PLANTED_ROUNDS; i++) {
		key = (key << 5) - key + i;
		barrier();
	}
	WRITE_ONCE(fault_locality_key, key);
}"
  kseries_insert_after mm/memory.c '^	check_sync_rss_stat\(current\);' "	mm_account_fault_locality(address);"
  kseries_meta "$k_bob" "mm: track fault address locality in handle_mm_fault()" \
    "Keep a cheap locality key of faulting addresses so that later patches can report
fault locality per mm. The key is updated once per fault."
}
KSERIES_PLANTED=kseries_22

kseries_23() {
  kseries_insert_before kernel/time/timekeeping.c '^void ktime_get_real_ts64' "/* Wall-clock time; may jump backwards when the clock is set. */"
  kseries_meta "$k_chen" "timekeeping: warn that ktime_get_real_ts64() may jump" "Comment only."
}

kseries_24() {
  kseries_insert_before lib/vsprintf.c '^int vsnprintf' "/* Returns the length the output would have had, not what was written. */"
  kseries_meta "$k_dana" "vsprintf: restate the vsnprintf() return value" "Comment only."
}

kseries_25() {
  kseries_insert_before drivers/tty/serial/8250/8250_core.c '^static int __init serial8250_init' "/* Also registers the legacy ISA ports, which QEMU's pc machine provides. */"
  kseries_meta "$k_emil" "serial: 8250: note the legacy ISA ports" "Comment only."
}

kseries_26() {
  kseries_insert_before fs/open.c '^long do_sys_open' "/* Thin wrapper kept for the compat and syscall entry points. */"
  kseries_meta "$k_alice" "fs/open: describe do_sys_open()" "No functional change."
}

kseries_27() {
  kseries_insert_before kernel/signal.c '^int kill_pid_info' "/* Takes the RCU read lock itself; callers need not hold it. */"
  kseries_meta "$k_bob" "signal: state the locking of kill_pid_info()" "Comment only."
}

kseries_28() {
  kseries_insert_before mm/util.c '^char \*kstrdup\(' "/* Returns NULL for a NULL @s as well as on allocation failure. */"
  kseries_meta "$k_chen" "mm/util: document kstrdup(NULL)" "Comment only."
}

kseries_29() {
  kseries_insert_before fs/dcache.c '^struct dentry \*d_alloc\(' "/* The new dentry holds a reference to @parent. */"
  kseries_meta "$k_dana" "dcache: note the parent reference in d_alloc()" "Comment only."
}

kseries_30() {
  kseries_insert_before kernel/printk/printk.c '^int vprintk_default' "/* Default printk path when no per-CPU override (NMI, safe context) is active. */"
  kseries_meta "$k_emil" "printk: comment vprintk_default()" "Comment only."
}

kseries_31() {
  kseries_insert_before lib/sort.c '^void sort_r\(' "/* Heapsort: O(n log n) worst case, not stable. */"
  kseries_meta "$k_alice" "lib/sort: say that sort_r() is not stable" "Comment only."
}

kseries_32() {
  kseries_insert_before fs/super.c '^struct super_block \*sget_fc\(' "/* Returns an existing superblock when @test matches, else a new one from @fc. */"
  kseries_meta "$k_bob" "fs/super: document sget_fc() reuse" "Comment only."
}

kseries_33() {
  kseries_insert_before kernel/resource.c '^int request_resource\(' "/* Fails with -EBUSY when @new overlaps an existing child of @root. */"
  kseries_meta "$k_chen" "resource: document the request_resource() error" "Comment only."
}

kseries_34() {
  kseries_append Documentation/admin-guide/README.rst "
Booting a freshly built kernel under QEMU with a small initramfs is the quickest way to
check that it starts at all before installing it on real hardware."
  kseries_meta "$k_dana" "docs: admin-guide: mention QEMU smoke boots" "Documentation only."
}

kseries_35() {
  kseries_insert_before arch/x86/mm/fault.c '^DEFINE_IDTENTRY_RAW_ERRORCODE\(exc_page_fault\)' "/* The #PF entry: reads CR2 first, before anything can fault again and clobber it. */"
  kseries_meta "$k_emil" "x86/mm: explain why exc_page_fault() reads CR2 first" "Comment only."
}

kseries_36() {
  kseries_insert_before kernel/sys.c '^SYSCALL_DEFINE0\(getppid\)' "/* The parent seen here is the real parent, not the ptracer. */"
  kseries_meta "$k_alice" "sys: note that getppid() ignores ptrace" "Comment only."
}

KSERIES_COMMITS=()
for kseries_n in $(seq -w 1 36); do
  KSERIES_COMMITS+=("kseries_$kseries_n")
done
unset kseries_n
