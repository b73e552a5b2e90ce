#!/usr/bin/env bash
# ssh-box.sh — "lab boxes" for the ssh backend's tests: QEMU guests (TCG) that behave like lab servers.
# A box boots a default kernel with an initramfs made from this host's Debian packages: busybox-static, dropbear
# (sshd) with OpenSSH's sftp-server (for scp), kexec-tools, the bench-core programs and linux-perf's perf (when this
# host has it), each with the shared libraries ldd names. It is reachable only through QEMU user networking's port
# forward 127.0.0.1:PORT -> :22 (restrict=on: the guest reaches nothing else), so it is driven exactly as a real
# box: ssh, scp, kexec, reboot.
#
#   ssh-box.sh image DIR BENCH_DIR AUTHORIZED_KEYS   DIR/initramfs.cpio.gz with a new host key (DIR/host_key.pub)
#   ssh-box.sh start DIR NAME PORT KERNEL            boot box NAME (state in DIR/NAME) on KERNEL, its default
#   ssh-box.sh power-cycle DIR NAME                  the PDU stand-in: kill its QEMU by PID, boot it again
#   ssh-box.sh stop DIR NAME                         kill its QEMU by PID
#
# Per box, DIR/NAME holds: qemu.pid, serial.log (the serial console, appended across power cycles: read it with
# `tail -F -n 0`), monitor.sock (QEMU's human monitor: `stop` freezes the guest's CPUs), known_hosts (the box's
# pinned host key as [127.0.0.1]:PORT), port, kernel. The box's kernel command line has the console on ttyS0;
# a kexec'd kernel inherits it (the ssh backend reads /proc/cmdline) and runs the same /init.
#
# Environment: BOX_OWNER_PID (start: when that process is gone, the box is stopped too, so a test killed before
# its cleanup leaves no QEMU behind), BOX_MEMORY_MB (512), BOX_BOOT_APPEND (extra kernel command line), QEMU (qemu-system-x86_64),
# BOX_TSC_KHZ (the guest's TSC rate; default: this host's "cpu MHz"; off: none). Under TCG the guest's TSC runs at
# the host's rate; told so, the guest keeps the TSC as its clock instead of falling back to jiffies, which lag
# under host load and make the benchmarks time themselves wrongly (the QEMU lab's tsc_khz does the same).
set -euo pipefail

die() { echo "ssh-box.sh: error: $*" >&2; exit 1; }
usage() { sed -n '7,11p' "$0" | sed 's/^# *//' >&2; exit 2; }

# The box's /init: mounts, the NIC with user networking's static address, dropbear, then it idles as PID 1.
# "bisectd.box_nossh" on the command line leaves sshd out: a kernel that boots but never brings ssh back.
box_init() {
  cat <<'INIT'
#!/bin/sh
/bin/busybox --install -s
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /var/tmp /run /var/log
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
hostname box
ip link set lo up
ip addr add 10.0.2.15/24 dev eth0
ip link set eth0 up
ip route add default via 10.0.2.2
echo "BISECTD-BOX release=$(uname -r) boot_id=$(cat /proc/sys/kernel/random/boot_id)"
if grep -q 'bisectd.box_nossh' /proc/cmdline; then
  echo "BISECTD-BOX sshd left out (bisectd.box_nossh)"
else
  dropbear -s -r /etc/dropbear/host_key -p 22 -P /run/dropbear.pid && echo "BISECTD-BOX sshd up"
fi
# PID 1 must not exit; it also reaps the sessions' orphans.
while :; do sleep 3600; done
INIT
}

# copy_with_libs ROOT PROGRAM DEST: PROGRAM at ROOT/DEST and every library ldd names at its own path.
copy_with_libs() {
  local root=$1 program=$2 dest=$3 lib
  install -D -m 0755 "$(readlink -f "$program")" "$root/$dest"
  # ldd prints "name => /path (addr)" or "/path (addr)" for the loader; static programs print no paths.
  while read -r lib; do
    [[ -e $root$lib ]] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
  done < <(ldd "$program" 2>/dev/null | grep -o '/[^ ]*' || true)
}

make_image() {
  local dir=$1 bench=$2 keys=$3 program
  [[ -x /bin/busybox ]] || die "/bin/busybox missing (apt-get install busybox-static)"
  for program in /usr/sbin/dropbear /usr/bin/dropbearkey /usr/sbin/kexec /usr/lib/openssh/sftp-server; do
    [[ -x $program ]] || die "$program missing (apt-get install dropbear-bin kexec-tools openssh-sftp-server)"
  done
  [[ -x $bench/page_fault ]] || die "$bench: no bench-core programs"
  [[ -s $keys ]] || die "$keys: no authorized key"
  mkdir -p "$dir"
  local root
  root=$(mktemp -d "$dir/root.XXXXXX")
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/lib,etc/dropbear,proc,sys,dev,tmp,run,root/.ssh,var/tmp,boot}
  install -m 0755 /bin/busybox "$root/bin/busybox"
  ln -s busybox "$root/bin/sh"
  box_init >"$root/init"
  chmod 0755 "$root/init"
  copy_with_libs "$root" /usr/sbin/dropbear usr/sbin/dropbear
  copy_with_libs "$root" /usr/sbin/kexec usr/sbin/kexec
  # dropbear runs /usr/lib/sftp-server for OpenSSH's scp (SFTP protocol since OpenSSH 9.0).
  copy_with_libs "$root" /usr/lib/openssh/sftp-server usr/lib/sftp-server
  # perf, as a box with Debian's linux-perf has it: bisectd profiles the runs with the box's own perf.
  [[ -x /usr/bin/perf ]] && copy_with_libs "$root" /usr/bin/perf usr/bin/perf
  for program in "$bench"/*; do
    [[ -f $program && -x $program ]] && copy_with_libs "$root" "$program" "usr/bin/${program##*/}"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\n' >"$root/etc/group"
  printf '/bin/sh\n' >"$root/etc/shells"
  install -m 0600 "$keys" "$root/root/.ssh/authorized_keys"
  chmod 0700 "$root/root" "$root/root/.ssh"
  # A new host key for every image: tests pin it in known_hosts, nothing ever learns it on first use.
  rm -f "$dir/host_key" "$dir/host_key.pub"
  dropbearkey -t ed25519 -f "$dir/host_key" 2>/dev/null | grep '^ssh-ed25519 ' | cut -d' ' -f1-2 >"$dir/host_key.pub"
  [[ -s $dir/host_key.pub ]] || die "dropbearkey made no ed25519 key"
  install -m 0600 "$dir/host_key" "$root/etc/dropbear/host_key"
  (cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -n -6 \
    >"$dir/initramfs.cpio.gz.new"
  mv "$dir/initramfs.cpio.gz.new" "$dir/initramfs.cpio.gz"
  rm -rf "$root"
}

# The kernel command line's clock part: TSC at a known rate, or nothing when unknown.
tsc_append() {
  local khz=${BOX_TSC_KHZ:-}
  if [[ -z $khz ]]; then
    khz=$(awk -F': *' '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
  fi
  [[ $khz =~ ^[0-9]+$ && $khz -ge 1000 ]] || return 0
  echo "tsc_early_khz=$khz tsc=reliable clocksource=tsc"
}

# boot DIR NAME: starts the box's QEMU (daemonized) on its default kernel, serial console appended to serial.log.
boot() {
  local box=$1/$2 port kernel
  port=$(cat "$box/port")
  kernel=$(cat "$box/kernel")
  rm -f "$box/qemu.pid" "$box/monitor.sock"
  "${QEMU:-qemu-system-x86_64}" -nodefaults -display none -machine pc -accel tcg -m "${BOX_MEMORY_MB:-512}" \
    -smp 1 -kernel "$kernel" -initrd "$1/initramfs.cpio.gz" \
    -append "console=ttyS0,115200 panic=-1 oops=panic i8042.noaux rdinit=/init $(tsc_append) ${BOX_BOOT_APPEND:-}" \
    -chardev "file,id=console,path=$box/serial.log,append=on" -serial chardev:console \
    -monitor "unix:$box/monitor.sock,server=on,wait=off" \
    -netdev "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:22" \
    -device virtio-net-pci,netdev=net0,romfile= \
    -pidfile "$box/qemu.pid" -daemonize
}

# kill_box DIR NAME: SIGKILL to the PID QEMU wrote, then waits (bounded) until that process is gone.
kill_box() {
  local box=$1/$2 pid i
  [[ -s $box/qemu.pid ]] || return 0
  pid=$(cat "$box/qemu.pid")
  [[ $pid =~ ^[0-9]+$ ]] || die "$box/qemu.pid: not a PID"
  # Only a QEMU that has this box's monitor socket on its command line is this box's (the PID may be reused).
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "unix:$box/monitor.sock"; then
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      [[ -e /proc/$pid ]] || break
      sleep 0.1
    done
    [[ ! -e /proc/$pid ]] || die "QEMU $pid did not die"
  fi
  rm -f "$box/qemu.pid"
}

# reap DIR NAME OWNER: stops the box once OWNER is gone (polled every 2 s; ends when the box is stopped).
reap() {
  while kill -0 "$3" 2>/dev/null; do
    [[ -e $1/$2/reaper.pid ]] || return 0
    sleep 2
  done
  echo "ssh-box.sh: $3 is gone: stopping $2" >&2
  kill_box "$1" "$2"
  rm -f "$1/$2/reaper.pid"
}

# start_reaper DIR NAME: a detached `reap` for BOX_OWNER_PID, its PID in reaper.pid (replacing an older one).
start_reaper() {
  stop_reaper "$1" "$2"
  [[ ${BOX_OWNER_PID:-} =~ ^[0-9]+$ ]] || return 0
  setsid "$0" reap "$1" "$2" "$BOX_OWNER_PID" </dev/null >>"$1/$2/reaper.log" 2>&1 &
  echo $! >"$1/$2/reaper.pid"
}

stop_reaper() {
  local pid
  pid=$(cat "$1/$2/reaper.pid" 2>/dev/null) || return 0
  rm -f "$1/$2/reaper.pid"
  [[ $pid =~ ^[0-9]+$ ]] && kill "$pid" 2>/dev/null || true
}

cmd=${1:-}
# Absolute from here on: QEMU's command line names the box's files, and kill_box recognises its QEMU by them.
[[ $# -lt 2 ]] || set -- "$1" "$(realpath -m "$2")" "${@:3}"
case $cmd in
  image)
    [[ $# -eq 4 ]] || usage
    make_image "$2" "$3" "$4"
    ;;
  start)
    [[ $# -eq 5 && $4 =~ ^[0-9]+$ ]] || usage
    [[ -s $2/initramfs.cpio.gz && -s $2/host_key.pub ]] || die "$2: no box image (ssh-box.sh image first)"
    [[ -r $5 ]] || die "$5: no kernel"
    mkdir -p "$2/$3"
    echo "$4" >"$2/$3/port"
    realpath "$5" >"$2/$3/kernel"
    echo "[127.0.0.1]:$4 $(cat "$2/host_key.pub")" >"$2/$3/known_hosts"
    kill_box "$2" "$3"
    boot "$2" "$3"
    start_reaper "$2" "$3"
    ;;
  power-cycle)
    [[ $# -eq 3 && -s $2/$3/port ]] || usage
    echo "ssh-box.sh: power cycling $3" >&2
    kill_box "$2" "$3"
    boot "$2" "$3"
    ;;
  stop)
    [[ $# -eq 3 ]] || usage
    stop_reaper "$2" "$3"
    kill_box "$2" "$3"
    ;;
  reap)
    [[ $# -eq 4 && $4 =~ ^[0-9]+$ ]] || usage
    reap "$2" "$3" "$4"
    ;;
  *) usage ;;
esac
