// splitbrain-delay-line: the wire between emulated nodes (tools/emulate-nodes.sh) where the kernel
// cannot delay packets itself (no sch_netem). Each node's interface is a TUN device in the node's
// network namespace; this program holds all of them, reads every IPv4 packet a node sends, and
// writes it into the destination node's device once the link's one-way delay has passed (and the
// receiving port is free: wire_schedule.h). The sending side's rate is the kernel's token bucket
// on the node's interface. It runs with a real-time priority where it may, so that ranks spinning
// on every core cannot hold a packet back by a scheduler time slice; what delivery it achieved
// (how late each packet was written against its due time) is printed when it is stopped.
#include <CLI/CLI.hpp>
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <deque>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/delay_line/wire_schedule.h"

namespace {

using splitbrain::tools::WireSchedule;

double now_seconds() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

volatile sig_atomic_t stop_requested = 0;
void request_stop(int) { stop_requested = 1; }

struct Node {
  std::string netns;
  uint32_t address = 0;  // IPv4, network byte order
  int tun = -1;
};

// "NETNS=ADDRESS" -> a node whose device is still to be opened.
Node parse_node(const std::string& text) {
  const size_t equals = text.find('=');
  Node node;
  if (equals == std::string::npos)
    throw std::invalid_argument(fmt::format("--node '{}': expected NETNS=ADDRESS", text));
  node.netns = text.substr(0, equals);
  in_addr address{};
  if (inet_pton(AF_INET, text.substr(equals + 1).c_str(), &address) != 1) {
    throw std::invalid_argument(fmt::format("--node '{}': '{}' is not an IPv4 address", text, text.substr(equals + 1)));
  }
  node.address = address.s_addr;
  return node;
}

// Opens the persistent TUN device `interface` inside network namespace `netns` (by its name
// under /run/netns, as `ip netns add` makes it) and returns to this process's own namespace.
int open_tun_in(const std::string& netns, const std::string& interface) {
  const int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const std::string path = "/run/netns/" + netns;
  const int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (home < 0 || target < 0) throw std::runtime_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  if (setns(target, CLONE_NEWNET) != 0) {
    throw std::runtime_error(fmt::format("cannot enter {}: {}", path, std::strerror(errno)));
  }
  const int tun = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(request.ifr_name, interface.c_str(), IFNAMSIZ - 1);
  const bool attached = tun >= 0 && ioctl(tun, TUNSETIFF, &request) == 0;
  const int error = errno;
  if (setns(home, CLONE_NEWNET) != 0) throw std::runtime_error("cannot return to this process's network namespace");
  close(home);
  close(target);
  if (!attached) {
    throw std::runtime_error(fmt::format("cannot attach TUN device {} in {} (made with `ip tuntap add mode tun`?): {}",
                                         interface, netns, std::strerror(error)));
  }
  return tun;
}

struct Packet {
  double due_seconds;
  std::vector<unsigned char> bytes;
};

// How late packets were written, in microseconds past their due time, and what was dropped:
// packets for no node (IPv6 neighbour discovery, say) and writes the destination refused.
void print_summary(std::vector<float> late_us, long unroutable, long refused) {
  if (late_us.empty()) {
    std::cerr << fmt::format("delay line: no packets ({} not IPv4 to a node, {} refused, dropped)\n", unroutable,
                             refused);
    return;
  }
  std::sort(late_us.begin(), late_us.end());
  auto at = [&](double q) { return late_us[static_cast<size_t>(q * static_cast<double>(late_us.size() - 1))]; };
  std::cerr << fmt::format(
      "delay line: {} packets delivered, late by median {:.1f} us, 99th percentile {:.1f} us, most {:.1f} us; "
      "dropped: {} not IPv4 to a node, {} refused by the destination\n",
      late_us.size(), at(0.5), at(0.99), late_us.back(), unroutable, refused);
}

int run(const std::vector<std::string>& node_texts, const std::string& interface, double delay_seconds,
        double bits_per_second, double spin_seconds) {
  std::vector<Node> nodes;
  for (const std::string& text : node_texts) nodes.push_back(parse_node(text));
  for (Node& node : nodes) node.tun = open_tun_in(node.netns, interface);
  WireSchedule wire(static_cast<int>(nodes.size()), delay_seconds, bits_per_second / 8.0);

  // A real-time priority lets a due packet preempt ranks that spin on every core; timer slack of
  // 1 ns keeps the kernel from rounding the wake-up (50 us by default) on a 100 us delay.
  sched_param priority{};
  priority.sched_priority = 10;
  if (sched_setscheduler(0, SCHED_FIFO, &priority) != 0) {
    std::cerr << fmt::format("delay line: no real-time priority ({}); delays may stretch while CPUs are busy\n",
                             std::strerror(errno));
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  // SIGTERM and SIGINT arrive only inside ppoll, so a stop is never missed between checks.
  sigset_t blocked, waiting;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  sigprocmask(SIG_BLOCK, &blocked, &waiting);
  sigdelset(&waiting, SIGTERM);
  sigdelset(&waiting, SIGINT);
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  std::cout << "delay line: ready" << std::endl;
  std::vector<pollfd> polled;
  for (const Node& node : nodes) polled.push_back({node.tun, POLLIN, 0});
  std::vector<std::deque<Packet>> queues(nodes.size());
  std::vector<float> late_us;
  long unroutable = 0;
  long refused = 0;
  std::vector<unsigned char> buffer(65536);
  while (stop_requested == 0) {
    double next_due = -1.0;
    for (const auto& queue : queues) {
      if (!queue.empty() && (next_due < 0 || queue.front().due_seconds < next_due))
        next_due = queue.front().due_seconds;
    }
    timespec timeout{};
    timespec* wait = nullptr;
    // Waking from a sleep takes tens of microseconds here (seen: 26-44 us median past the due
    // time at real-time priority): within `spin_seconds` of a packet's due time the loop polls
    // without sleeping, still reading what the nodes send meanwhile. Off by default: the spin
    // runs on a CPU the nodes compute on (a tiny GPT's pipeline on 2 nodes x 1 rank of a 2-CPU
    // host stepped about a fifth slower spinning 50 us per packet than not), and the later
    // delivery is part of the link that calibrate measures.
    if (next_due >= 0) {
      const double left = std::max(0.0, next_due - spin_seconds - now_seconds());
      timeout.tv_sec = static_cast<time_t>(left);
      timeout.tv_nsec = static_cast<long>((left - static_cast<double>(timeout.tv_sec)) * 1e9);
      wait = &timeout;
    }
    if (ppoll(polled.data(), polled.size(), wait, &waiting) < 0 && errno != EINTR) {
      throw std::runtime_error(fmt::format("ppoll: {}", std::strerror(errno)));
    }
    for (size_t from = 0; from < nodes.size(); ++from) {
      if ((polled[from].revents & POLLIN) == 0) continue;
      for (;;) {
        const ssize_t length = read(nodes[from].tun, buffer.data(), buffer.size());
        if (length <= 0) break;
        const double sent = now_seconds();
        uint32_t destination_address = 0;
        if (length >= 20 && (buffer[0] >> 4) == 4) std::memcpy(&destination_address, &buffer[16], 4);
        const auto to = std::find_if(nodes.begin(), nodes.end(),
                                     [&](const Node& node) { return node.address == destination_address; });
        if (to == nodes.end()) {
          ++unroutable;
          continue;
        }
        const int destination = static_cast<int>(to - nodes.begin());
        queues[destination].push_back(
            {wire.deliver_at(destination, sent, length), {buffer.begin(), buffer.begin() + length}});
      }
    }
    const double now = now_seconds();
    for (size_t to = 0; to < queues.size(); ++to) {
      while (!queues[to].empty() && queues[to].front().due_seconds <= now) {
        const Packet& packet = queues[to].front();
        if (write(nodes[to].tun, packet.bytes.data(), packet.bytes.size()) < 0) {
          ++refused;
        } else {
          late_us.push_back(static_cast<float>((now_seconds() - packet.due_seconds) * 1e6));
        }
        queues[to].pop_front();
      }
    }
  }
  print_summary(std::move(late_us), unroutable, refused);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The wire between emulated nodes where the kernel has no netem: delays every IPv4 packet between the nodes' "
      "TUN devices by a fixed time (tools/emulate-nodes.sh starts it). Stop it with SIGTERM."};
  std::vector<std::string> nodes;
  std::string interface = "sbnet0";
  double delay_microseconds = 0.0;
  double bits_per_second = 1e9;
  double spin_microseconds = 0.0;
  app.add_option("--node", nodes, "a node as NETNS=ADDRESS: its namespace (under /run/netns) and IPv4 address")
      ->required();
  app.add_option("--interface", interface, "the TUN device's name in every node's namespace")->capture_default_str();
  app.add_option("--delay-microseconds", delay_microseconds, "one-way delay of the link")
      ->required()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--bits-per-second", bits_per_second, "the rate at which a node's port takes packets in")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--spin-microseconds", spin_microseconds,
                 "wake this long before a packet is due and spin until it is (a sleep overshoots by tens of us; "
                 "the spin takes a CPU from the nodes)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return run(nodes, interface, delay_microseconds * 1e-6, bits_per_second, spin_microseconds * 1e-6);
  } catch (const std::exception& e) {
    std::cerr << "splitbrain-delay-line: " << e.what() << "\n";
    return 2;
  }
}
