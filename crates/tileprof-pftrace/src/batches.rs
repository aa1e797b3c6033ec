//! Rows encoded in batches on rayon threads, each batch compressed into one packet.

use prost::Message;
use rayon::prelude::*;

use zlib_rs::deflate::{compress_bound, DeflateConfig};
use zlib_rs::ReturnCode;

use crate::proto::{TracePacket, TRACE_PACKET_FIELD};

/// The file's bytes for some rows: one `Trace.packet` field per batch, each a `TracePacket`
/// whose `compressed_packets` is the zlib stream of the batch's packets, in row order.
pub type Encoded = Vec<Vec<u8>>;

/// Rows `0..rows` in batches of `batch`: `encode(start, end, buffer)` appends the packets of
/// rows `start..end` (each framed as a `Trace.packet` field) to `buffer`. Batches run on the
/// current rayon pool; the result is in row order, the same for any number of threads.
pub fn compressed<F>(rows: usize, batch: usize, level: u32, encode: F) -> Encoded
where
    F: Fn(usize, usize, &mut Vec<u8>) + Sync,
{
    let batch = batch.max(1);
    let starts: Vec<usize> = (0..rows).step_by(batch).collect();
    starts
        .into_par_iter()
        // one buffer per thread, reused batch after batch (a fresh one per batch, ~8 MB,
        // faults its pages in again every time)
        .map_init(Vec::new, |plain, start| {
            let end = (start + batch).min(rows);
            plain.clear();
            plain.reserve((end - start) * 160);
            encode(start, end, plain);
            compress(plain, level)
        })
        .collect()
}

/// `plain` (packets in Trace framing) as one framed packet holding them zlib-compressed.
pub fn compress(plain: &[u8], level: u32) -> Vec<u8> {
    let mut packed = Vec::with_capacity(compress_bound(plain.len()));
    let config = DeflateConfig::new(level.min(9) as i32);
    let (done, code) = zlib_rs::deflate::compress(packed.spare_capacity_mut(), plain, config);
    assert!(code == ReturnCode::Ok, "zlib compression failed: {code:?}");
    let len = done.len();
    // SAFETY: `compress` initialized the first `len` bytes of the spare capacity it was given.
    // Measured against a zeroed buffer and `compress_slice` (3 runs each, 1M-sample dump): the
    // write stage took 0.51 s against 0.46 s, since zeroing faults in the whole bound of each
    // batch (~8 MB) where the compressed output touches about a third of it.
    unsafe { packed.set_len(len) };
    let packet = TracePacket {
        compressed_packets: Some(packed),
        ..Default::default()
    };
    let mut out = Vec::with_capacity(packet.encoded_len() + 8);
    frame(&packet, &mut out);
    out
}

/// Append `packet` as one `Trace.packet` field (key, length, message).
#[inline]
pub fn frame(packet: &TracePacket, out: &mut Vec<u8>) {
    prost::encoding::message::encode(TRACE_PACKET_FIELD, packet, out);
}
