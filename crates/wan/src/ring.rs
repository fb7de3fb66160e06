//! The receive side: an AF_PACKET socket with a TPACKET_V2 receive ring mapped into our memory.
//!
//! The kernel copies each frame arriving on the interface into the next free slot of the ring
//! (in the softirq that delivers it, on the sender's CPU), stamps it with the time, and marks it
//! ours; we read frames in
//! place, with no system call while frames keep coming, and hand each slot back once we are done
//! with it. The socket is promiscuous, takes every protocol, and ignores frames sent out of the
//! interface (`PACKET_IGNORE_OUTGOING`), so the other direction's output never loops back.
//!
//! A slot must be handed back promptly: the kernel reports the socket readable while the slot
//! it filled last is still ours, so a frame kept in the ring would make every wait return at once.

use std::io;
use std::mem::zeroed;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::socket::PacketSocket;

/// Size of one ring block; frames never straddle blocks.
const BLOCK_BYTES: usize = 256 << 10;

/// A frame waiting in the ring.
#[derive(Clone, Copy, Debug)]
pub struct RingFrame {
    /// Slot index, to hand back with [`RxRing::release`].
    pub index: usize,
    /// Offset of the Ethernet frame in the slot.
    offset: usize,
    /// Bytes of the frame in the slot.
    pub captured: usize,
    /// The frame's real length; larger than `captured` when it did not fit the slot.
    pub len: usize,
    /// When the kernel received it, in nanoseconds on CLOCK_REALTIME.
    pub realtime_ns: u64,
}

/// A receive ring on one interface.
pub struct RxRing {
    socket: PacketSocket,
    map: NonNull<u8>,
    map_len: usize,
    block_size: usize,
    frame_size: usize,
    frames_per_block: usize,
    frames: usize,
    /// Next slot to look at.
    head: usize,
}

// SAFETY: the mapping belongs to this value alone; the kernel synchronises through each slot's
// status word, which we access atomically.
unsafe impl Send for RxRing {}

impl RxRing {
    /// A ring of at least `frames` slots, each holding a frame of up to `max_frame` bytes, on the
    /// interface `ifname` of the calling thread's network namespace.
    pub fn open(ifname: &str, frames: usize, max_frame: usize) -> io::Result<Self> {
        let socket = PacketSocket::open()?;
        socket.set_option(
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            libc::tpacket_versions::TPACKET_V2 as libc::c_int,
        )?;
        socket.set_option(libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1)?;
        // The kernel puts the Ethernet header up to 16 bytes past the aligned header (libpcap
        // sizes its slots the same way).
        let frame_size = (libc::TPACKET2_HDRLEN + 16 + max_frame).next_power_of_two();
        let frames_per_block = (BLOCK_BYTES / frame_size).max(1);
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let block_size = (frames_per_block * frame_size).next_multiple_of(page);
        let blocks = frames.div_ceil(frames_per_block);
        let req = libc::tpacket_req {
            tp_block_size: block_size as u32,
            tp_block_nr: blocks as u32,
            tp_frame_size: frame_size as u32,
            tp_frame_nr: (blocks * frames_per_block) as u32,
        };
        socket.set_struct(libc::SOL_PACKET, libc::PACKET_RX_RING, &req)?;
        let map_len = block_size * blocks;
        // SAFETY: maps the ring the kernel has just allocated for this socket; checked below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                socket.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ring = RxRing {
            map: NonNull::new(map.cast()).expect("mmap succeeded"),
            map_len,
            block_size,
            frame_size,
            frames_per_block,
            frames: blocks * frames_per_block,
            head: 0,
            socket,
        };
        let ifindex = ring.socket.bind(ifname, libc::ETH_P_ALL as u16)?;
        // SAFETY: packet_mreq is a plain C struct; all-zero bytes are valid.
        let mut mreq: libc::packet_mreq = unsafe { zeroed() };
        mreq.mr_ifindex = ifindex as libc::c_int;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        ring.socket
            .set_struct(libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)?;
        ring.socket.take_drops()?;
        Ok(ring)
    }

    /// The next frame, if the kernel has filled the slot at the head; moves the head past it.
    pub fn next(&mut self) -> Option<RingFrame> {
        let header = self.header(self.head);
        // SAFETY: `header` points at the slot's tpacket2_hdr inside our mapping; its status word
        // is shared with the kernel and read atomically (acquire: the frame is written before).
        let status =
            unsafe { AtomicU32::from_ptr(&raw mut (*header).tp_status) }.load(Ordering::Acquire);
        if status & libc::TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the slot is ours until released, so the kernel does not write its header.
        let (offset, captured, len, sec, nsec) = unsafe {
            let h = &*header;
            (
                h.tp_mac as usize,
                h.tp_snaplen as usize,
                h.tp_len as usize,
                h.tp_sec as u64,
                h.tp_nsec as u64,
            )
        };
        let index = self.head;
        self.head = (self.head + 1) % self.frames;
        Some(RingFrame {
            index,
            offset,
            captured,
            len,
            realtime_ns: sec * 1_000_000_000 + nsec,
        })
    }

    /// Where the Ethernet frame of `frame` starts; valid until the slot is released.
    pub fn data(&self, frame: &RingFrame) -> *const u8 {
        // SAFETY: tp_mac, read from the slot's header, is an offset inside the slot.
        unsafe { self.header(frame.index).cast::<u8>().add(frame.offset) }
    }

    /// Hands slot `index` back to the kernel; its data must not be used afterwards.
    pub fn release(&self, index: usize) {
        let header = self.header(index);
        // SAFETY: as in `next`; release ordering: our reads of the frame happen before the kernel
        // may overwrite it.
        unsafe { AtomicU32::from_ptr(&raw mut (*header).tp_status) }
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
    }

    /// The socket, to wait on and to read statistics from.
    pub fn socket(&self) -> &PacketSocket {
        &self.socket
    }

    fn header(&self, index: usize) -> *mut libc::tpacket2_hdr {
        let block = index / self.frames_per_block;
        let offset = block * self.block_size + (index % self.frames_per_block) * self.frame_size;
        debug_assert!(offset + self.frame_size <= self.map_len);
        // SAFETY: the offset is inside the mapping for every index below `self.frames`.
        unsafe { self.map.as_ptr().add(offset).cast() }
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region mapped in `open`; no RingFrame outlives the ring.
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.map_len) };
    }
}
