//! A minimal protobuf writer for the hand-made Perfetto traces of these tests.

pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field `tag`.
pub fn int_field(tag: u64, v: u64, out: &mut Vec<u8>) {
    varint(tag << 3, out);
    varint(v, out);
}

/// A length-delimited field `tag` (a nested message, bytes or a packed array).
pub fn msg_field(tag: u64, body: &[u8], out: &mut Vec<u8>) {
    varint((tag << 3) | 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}
