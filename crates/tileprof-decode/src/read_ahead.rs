//! A reader that reads its source on a thread of its own, a few chunks ahead of its caller.
//!
//! A gzip trace is decompressed on one thread while the decoder reads the text on others
//! (`kineto_stream` decodes a window on its pool, then reads the next window): without it,
//! the decoder's threads waited for every window's inflate. Measured on the `gzip -1` copy of
//! the issue 33 trace (timeline rows, two threads): 1.71-1.95 s without it, 1.39-1.67 s with
//! it, 1.30-1.54 s with it and flate2 on zlib-rs. The thread holds at most `DEPTH` chunks
//! of `CHUNK_BYTES` that the caller has not read, so a gzip bomb still costs only what the
//! caller reads (the window's limit bounds that) plus those chunks.

use std::io::{self, Read};
use std::panic::resume_unwind;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::{self, JoinHandle};

/// Bytes the thread reads at a time.
pub const CHUNK_BYTES: usize = 4 << 20;
/// Chunks it may hold ahead of the caller.
pub const DEPTH: usize = 4;

/// Reads `source` on its own thread (`ReadAhead::new`); an error of the source is the
/// caller's error at the place it occurred, and a panic in the thread is resumed on the
/// caller's thread (where tileprof-native's `guarded` makes it the one-line error every
/// panic is).
pub struct ReadAhead {
    chunks: Option<Receiver<io::Result<Vec<u8>>>>,
    /// Chunks read, handed back for the thread to fill again: a fresh one cost a zero-fill and
    /// a page fault per page (6% of a streamed decode's samples, perf).
    spent: SyncSender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
    worker: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// The reader of `source`, its thread started; an error when the thread cannot be (no
    /// memory for its stack: the caller declines the file, as for any read error).
    pub fn new<R: Read + Send + 'static>(
        source: R,
        chunk: usize,
        depth: usize,
    ) -> io::Result<Self> {
        let (sender, chunks) = sync_channel(depth);
        let (spent, returned) = sync_channel::<Vec<u8>>(depth);
        let worker = thread::Builder::new().spawn(move || {
            let mut source = source;
            loop {
                let buf = returned.try_recv().unwrap_or_default();
                let (buf, error) = fill(&mut source, buf, chunk);
                let last = error.is_some() || buf.len() < chunk;
                // an empty chunk is the end: one before an error is not sent
                let sent = if buf.is_empty() && error.is_some() {
                    Ok(())
                } else {
                    sender.send(Ok(buf))
                };
                // a send fails when the caller has let the reader go: stop reading
                if sent.is_err() || last {
                    if let Some(error) = error {
                        let _ = sender.send(Err(error));
                    }
                    return;
                }
            }
        })?;
        Ok(ReadAhead {
            chunks: Some(chunks),
            spent,
            current: Vec::new(),
            at: 0,
            worker: Some(worker),
        })
    }

    /// The next chunk, empty at the end; a panic of the thread resumed here.
    fn next_chunk(&mut self) -> io::Result<Vec<u8>> {
        let received = self.chunks.as_ref().map(Receiver::recv);
        match received {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) | None => {
                // the thread has ended: at the end of the source, or by a panic
                if let Some(worker) = self.worker.take() {
                    if let Err(payload) = worker.join() {
                        resume_unwind(payload);
                    }
                }
                Ok(Vec::new())
            }
        }
    }
}

/// Up to `chunk` bytes of `source` in `buf` (its contents overwritten), fewer only at its end
/// or before an error (returned beside the bytes read before it).
fn fill(source: &mut impl Read, mut buf: Vec<u8>, chunk: usize) -> (Vec<u8>, Option<io::Error>) {
    // grown with try_reserve, as every buffer of the decoder: out of memory is an error
    if buf
        .try_reserve_exact(chunk.saturating_sub(buf.len()))
        .is_err()
    {
        let error = io::Error::new(io::ErrorKind::OutOfMemory, "no memory to read ahead");
        return (Vec::new(), Some(error));
    }
    buf.resize(chunk, 0);
    let mut filled = 0;
    let mut failed = None;
    while filled < chunk {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => {
                failed = Some(error);
                break;
            }
        }
    }
    buf.truncate(filled);
    (buf, failed)
}

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.current.len() {
            let next = self.next_chunk()?;
            let spent = std::mem::replace(&mut self.current, next);
            let _ = self.spent.try_send(spent); // when the thread holds enough, let it go
            self.at = 0;
        }
        let n = out.len().min(self.current.len() - self.at);
        out[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        self.chunks = None; // the thread's next send fails, and it stops
        if let Some(worker) = self.worker.take() {
            let _ = worker.join(); // a panic after the caller let go has nothing to report to
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that yields `data` a few bytes a read, then fails or panics when asked.
    struct Source {
        data: Vec<u8>,
        at: usize,
        step: usize,
        then: Option<&'static str>,
    }

    impl Read for Source {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.at == self.data.len() {
                return match self.then {
                    Some("panic") => panic!("planted"),
                    Some(why) => Err(io::Error::other(why)),
                    None => Ok(0),
                };
            }
            let n = out.len().min(self.step).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn source(len: usize, step: usize, then: Option<&'static str>) -> Source {
        let data = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        Source {
            data,
            at: 0,
            step,
            then,
        }
    }

    #[test]
    fn it_reads_what_its_source_holds_in_any_chunks() {
        for (len, step, chunk, depth) in [(0, 1, 1, 1), (1000, 3, 7, 1), (1000, 64, 100, 4)] {
            let expected = source(len, step, None).data;
            let mut read = Vec::new();
            ReadAhead::new(source(len, step, None), chunk, depth)
                .unwrap()
                .read_to_end(&mut read)
                .unwrap();
            assert_eq!(read, expected, "{len} {step} {chunk}");
        }
    }

    #[test]
    fn an_error_comes_after_the_bytes_before_it() {
        // within a chunk, and at a chunk's end
        for (len, step) in [(10, 3), (8, 4)] {
            let mut reader = ReadAhead::new(source(len, step, Some("bad block")), 4, 2).unwrap();
            let mut read = vec![0u8; len];
            reader.read_exact(&mut read).unwrap();
            assert_eq!(read, source(len, step, None).data);
            let error = reader.read(&mut [0u8; 4]).unwrap_err();
            assert_eq!(error.to_string(), "bad block", "{len} {step}");
        }
    }

    #[test]
    fn a_chunk_that_cannot_be_allocated_is_an_error_not_an_abort() {
        let mut reader = ReadAhead::new(source(10, 3, None), 1 << 62, 1).unwrap();
        let error = reader.read(&mut [0u8; 4]).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::OutOfMemory);
    }

    #[test]
    fn a_panic_in_the_thread_is_resumed_on_the_callers() {
        let outcome = std::panic::catch_unwind(|| {
            let mut read = Vec::new();
            ReadAhead::new(source(5, 2, Some("panic")), 4, 2)
                .unwrap()
                .read_to_end(&mut read)
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn the_defaults_read_a_source_of_several_chunks_whole() {
        // the sizes the Kineto reader uses: two whole chunks and a partial one
        let len = 2 * CHUNK_BYTES + 17;
        let mut read = Vec::new();
        ReadAhead::new(source(len, CHUNK_BYTES / 3, None), CHUNK_BYTES, DEPTH)
            .unwrap()
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, source(len, 1, None).data);
    }

    /// A source whose every other read is interrupted (a signal during the read).
    struct Interrupted {
        inner: Source,
        interrupt: bool,
    }

    impl Read for Interrupted {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            self.inner.read(out)
        }
    }

    #[test]
    fn an_interrupted_read_is_tried_again_not_an_error() {
        let inner = source(100, 7, None);
        let expected = inner.data.clone();
        let interrupted = Interrupted {
            inner,
            interrupt: false,
        };
        let mut read = Vec::new();
        ReadAhead::new(interrupted, 16, 2)
            .unwrap()
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, expected);
    }

    /// A slow source that says when it is dropped (the file closed).
    struct Slow {
        dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
    }

    impl Read for Slow {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            thread::sleep(std::time::Duration::from_millis(50));
            out.fill(7);
            Ok(out.len())
        }
    }

    impl Drop for Slow {
        fn drop(&mut self) {
            self.dropped
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn a_reader_let_go_has_closed_its_source_when_the_drop_returns() {
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let source = Slow {
            dropped: dropped.clone(),
        };
        let mut reader = ReadAhead::new(source, 8, 1).unwrap();
        let mut first = [0u8; 4];
        reader.read_exact(&mut first).unwrap();
        drop(reader); // waits for the thread, which drops the source as it ends
        assert!(dropped.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn a_reader_let_go_early_stops_its_thread() {
        let mut reader = ReadAhead::new(source(1 << 20, 4096, None), 1024, 1).unwrap();
        let mut first = [0u8; 10];
        reader.read_exact(&mut first).unwrap();
        drop(reader); // joins the thread: a hang here would fail the test by time
    }
}
