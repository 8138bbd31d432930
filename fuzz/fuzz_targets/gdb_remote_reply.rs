//! What a gdbserver sends back, as the remote byte source decodes it: the
//! framing (acknowledgements, checksums, run lengths, notifications) fed in
//! pieces of any size, then each packet as a memory reply (hex and
//! binary), a `qXfer` piece and a library list. The server is untrusted
//! input, so nothing here may panic or allocate beyond the bounds given.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_read::gdb_remote_packet::{
    classify, decode_memory_reply, decode_xfer_reply, parse_library_list, unescape_binary, Decoder,
    Reply, ServerFrame,
};

/// The bound on one frame, as the client sets it from a packet size.
const MAX: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let len = usize::from(rest.first().copied().unwrap_or(0)) * 16;
    let mut decoder = Decoder::new(MAX);
    let mut frames = 0usize;
    // Bytes arrive in pieces of `split + 1`: a frame cut anywhere must
    // decode as it does whole.
    for piece in rest.chunks(usize::from(split) + 1) {
        decoder.push(piece);
        loop {
            match decoder.next_frame() {
                Ok(None) => break,
                Ok(Some(ServerFrame::Packet(p) | ServerFrame::Notification(p))) => {
                    frames += 1;
                    assert!(p.len() <= MAX);
                    for binary in [false, true] {
                        if let Ok(Reply::Data(bytes)) = decode_memory_reply(&p, len, binary) {
                            assert!(bytes.len() <= len);
                        }
                    }
                    if let Ok(Reply::Data(chunk)) = decode_xfer_reply(&p) {
                        assert!(chunk.data.len() <= p.len());
                        // Lossy decoding can lengthen the text (each bad
                        // byte becomes a 3-byte U+FFFD): a name is bounded
                        // by the text it is parsed from.
                        let text = String::from_utf8_lossy(&chunk.data);
                        for lib in parse_library_list(&text) {
                            assert!(lib.name.len() <= text.len());
                        }
                    }
                    let _ = classify(&p);
                    if let Ok(u) = unescape_binary(&p) {
                        assert!(u.len() <= p.len());
                    }
                }
                Ok(Some(_)) => frames += 1,
                Err(_) => frames += 1,
            }
            assert!(frames <= rest.len(), "a frame per byte at most");
        }
    }
});
