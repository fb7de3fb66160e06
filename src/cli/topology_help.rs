//! The help of `fathom lab up`: its examples, and the reference of topology files, so that a
//! user of the binary has it without the source tree (`lab up --help`; `-h` gives the short
//! form).

/// Examples of `lab up`, shown by `-h` and `--help` (a macro, so that `concat!` takes it).
macro_rules! examples {
    () => {
        "\
Examples:
  fathom lab up --hosts 32
  fathom lab up --hosts 2 --rate 100M --mtu 9000 --name slow
  fathom lab up --hosts 2 --wan \"delay=50ms,rate=1G\"      h1 - emulator - h2, 100 ms RTT
  fathom lab up --hosts 6 --wan delay=10ms        h1-h3 on sw1, h4-h6 on sw2, emulator between
  fathom lab up --hosts 2 --sshd                   then: fathom lab exec h1 -- scp /tmp/f h2:/tmp/
  fathom lab up topology.toml --name campus"
    };
}

/// The topology file reference.
macro_rules! topology {
    () => {
        "\
Topology files (TOML): every key is optional unless marked.

  [lab]
  subnet = \"10.77.0.0/16\"   # default subnet of every segment (default 10.77.0.0/16)
  mtu = 1500                # default MTU of every link (default 1500)

  [[switch]]
  name = \"sw1\"              # required: a Linux bridge in namespace fl-<lab>-sw1
  subnet = \"10.78.0.0/24\"   # a segment with a subnet of its own (default: the lab's)

  [[host]]
  name = \"h1\"               # required; the n-th host gets host address n (10.77.0.1)
  address = \"10.77.0.20\"    # the address of the host's first interface

  [[link]]
  ends = [\"h1\", \"sw1\"]      # required: two hosts or switches
  rate = \"1G\"               # k, M, G, T bits per second; tbf on both ends
  mtu = 9000                # per-link MTU
  ipsec = \"aes-256-gcm\"     # IPsec between the hosts on its two sides (a switch end
                            # stands for every host linked to it); one suite per lab

  [[wan]]                   # the WAN emulator between two nodes (router node wanN)
  ends = [\"sw1\", \"sw2\"]     # required: hosts or switches; a is ends[0], b is ends[1]
  name = \"transatlantic\"    # default \"<a>-<b>\"; `lab wan set` uses it
  params = \"delay=40ms,rate=1G\"   # both directions: delay (one way), jitter, loss, rate,
                            # burst, queue, reorder, seed
  a_to_b = \"loss=0.1%\"      # keys changed on top of params, frames from a to b
  b_to_a = \"rate=100M\"      # the same, frames from b to a
  mtu = 1500                # MTU of the path (default: the lab's)
  ipsec = \"aes-256-gcm\"     # as on [[link]]: the hosts on either side, pair by pair

Rules, checked before anything is made (errors name the entry and exit 2):
- names: 1-15 letters, digits or '_', starting with a letter, unique across hosts and
  switches; wan1, wan2, ... are the WAN routers' names; a WAN link's name is 1-32 letters,
  digits, '_' or '-';
- every link joins two different declared nodes, at most one link or WAN link per pair;
  every host has a link;
- a host gets one interface per link in link order (eth0, eth1, ...), each with an address
  from its segment's subnet (the switch's, or the lab's for a host-to-host link); a host may
  not have two interfaces in one subnet; addresses are unique;
- linked switches share a subnet; a switch takes at most 1024 links; switches joined by links
  and WAN links may not form a loop;
- subnets are ADDRESS/PREFIX with the host bits zero and a prefix of 1-30; MTU is 68-65535."
    };
}

/// `lab up -h`: the examples and where the topology reference is.
pub const SHORT: &str = concat!(
    examples!(),
    "\n\nTopology files (TOML): `fathom lab up --help` describes them."
);

/// `lab up --help`: the examples and the topology file reference.
pub const LONG: &str = concat!(examples!(), "\n\n", topology!());
