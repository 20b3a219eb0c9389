//! The index's arrays in a persisted index (records, side records, interned names, texts):
//! written as they sit in memory, read straight back into their vectors, so a reopen costs a
//! read and a check per entry rather than a decode.

use bytemuck::Zeroable;

use super::super::index::{Extra, Packed, Parts};
use super::codec::{Corrupt, Decoded, IndexReader, Reader, Writer};

/// Written in the host's order: a host of the other byte order reads another number and
/// rebuilds rather than misread the arrays.
const BYTE_ORDER: u64 = 0x0102_0304_0506_0708;

/// Entries in each array, as the header names them.
pub(crate) struct Lengths {
    records: usize,
    extras: usize,
    interned: usize,
    texts: usize,
}

pub(crate) fn write_lengths(w: &mut Writer, parts: &Parts) {
    w.bytes.extend_from_slice(&BYTE_ORDER.to_ne_bytes());
    for len in [
        parts.records.len(),
        parts.extras.len(),
        parts.interned.len(),
        parts.texts.len(),
    ] {
        w.u64(len as u64);
    }
}

pub(crate) fn read_lengths(r: &mut Reader) -> Decoded<Lengths> {
    if r.u64()?.to_le_bytes() != BYTE_ORDER.to_ne_bytes() {
        return Err(Corrupt("written on a host of another byte order"));
    }
    let mut next = || usize::try_from(r.u64()?).map_err(|_| Corrupt("array length"));
    Ok(Lengths {
        records: next()?,
        extras: next()?,
        interned: next()?,
        texts: next()?,
    })
}

/// The arrays' bytes, in the order they are written.
pub(crate) fn bytes<'a>(parts: &Parts<'a>) -> [&'a [u8]; 4] {
    [
        bytemuck::cast_slice(parts.records),
        bytemuck::cast_slice(parts.extras),
        bytemuck::cast_slice(parts.interned),
        parts.texts,
    ]
}

/// The arrays read back.
pub(crate) struct Arrays {
    pub(crate) records: Vec<Packed>,
    pub(crate) extras: Vec<Extra>,
    pub(crate) interned: Vec<u32>,
    pub(crate) texts: Vec<u8>,
}

/// Reads the arrays `lengths` names, which must be exactly the rest of the body.
pub(crate) fn read(reader: &mut IndexReader, lengths: &Lengths) -> Decoded<Arrays> {
    let size = |n: usize, each: usize| n.checked_mul(each).ok_or(Corrupt("array length"));
    let total = [
        size(lengths.records, size_of::<Packed>())?,
        size(lengths.extras, size_of::<Extra>())?,
        size(lengths.interned, 4)?,
        lengths.texts,
    ]
    .into_iter()
    .try_fold(0u64, |sum, n| sum.checked_add(n as u64));
    // Checked before allocating: a damaged length never asks for more than the file holds.
    if total != Some(reader.remaining()) {
        return Err(Corrupt("array lengths"));
    }
    let mut arrays = Arrays {
        records: vec![Packed::zeroed(); lengths.records],
        extras: vec![Extra::zeroed(); lengths.extras],
        interned: vec![0; lengths.interned],
        texts: vec![0; lengths.texts],
    };
    reader.read_into(bytemuck::cast_slice_mut(&mut arrays.records))?;
    reader.read_into(bytemuck::cast_slice_mut(&mut arrays.extras))?;
    reader.read_into(bytemuck::cast_slice_mut(&mut arrays.interned))?;
    reader.read_into(&mut arrays.texts)?;
    Ok(arrays)
}
