// Copyright 2024 Cornell University
// released under BSD 3-Clause License
// author: Kevin Laeufer <laeufer@cornell.edu>

use crate::io::{
    write_multi_bit_signal, write_one_bit_signal, write_time_chain_update,
    write_value_change_section,
};
use crate::{FstSignalId, FstSignalType, FstWriteError, Result};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::io::{Seek, Write};

/// keeps track of signal values before writing them to disk
pub(crate) struct SignalBuffer {
    start_time: u64,
    end_time: u64,
    /// constant signal meta-data
    signal_info: Vec<SignalInfo>,
    /// time table index of the previous change for each signal
    prev_time_table_index: Box<[u32]>,
    /// values for all signals in the first time step of this block
    frame: Box<[u8]>,
    /// copy of the frame with all value changes applied
    values: Box<[u8]>,
    /// the encoded value changes of each signal in this block, in time order (flitwave's
    /// patch: one `Vec` per signal instead of lists threaded through one buffer, so a flush
    /// reads each signal's changes in place instead of walking back-pointers)
    value_changes: Vec<Vec<u8>>,
    /// bytes in `value_changes`, plus four per change as the threaded lists counted them
    value_changes_bytes: usize,
    /// contains the delta encoded and compressed timetable
    time_table: Vec<u8>,
    time_table_index: u32,
    /// is this the first buffer for the file that we are writing?
    first_buffer: bool,
    /// remove a consecutive value change that repeats the same value
    deduplicate: bool,
}

#[derive(Debug, Clone)]
struct SignalInfo {
    /// length in bytes / number of characters
    len: u32,
    /// starting offset in the value buffer
    offset: u32,
}

fn gen_signal_info(signals: &[FstSignalType]) -> (Vec<SignalInfo>, usize) {
    let mut offset = 0;
    let mut out = Vec::with_capacity(signals.len());
    for signal in signals {
        out.push(SignalInfo {
            len: signal.len(),
            offset,
        });
        offset += signal.len();
    }
    (out, offset as usize)
}

impl SignalBuffer {
    pub(crate) fn new(signals: &[FstSignalType]) -> Result<Self> {
        let (signal_info, values_len) = gen_signal_info(signals);
        let value_changes = vec![Vec::new(); signal_info.len()];

        let mut values = vec![b'x'; values_len].into_boxed_slice();
        // Initialize reals as NaN.
        for (info, tpe) in signal_info.iter().zip(signals) {
            if tpe.is_real() {
                let range = info.offset as usize..(info.offset + info.len) as usize;
                values[range].copy_from_slice(&f64::NAN.to_le_bytes());
            }
        }

        let frame = values.clone();
        let prev_time_table_index = vec![0; signal_info.len()].into_boxed_slice();
        let time_table = Vec::with_capacity(16);
        Ok(Self {
            start_time: 0,
            end_time: 0,
            signal_info,
            prev_time_table_index,
            frame,
            values,
            value_changes,
            value_changes_bytes: 0,
            time_table,
            time_table_index: 0,
            first_buffer: true,
            deduplicate: true,
        })
    }

    pub(crate) fn set_deduplicate(&mut self, deduplicate: bool) {
        self.deduplicate = deduplicate;
    }

    pub(crate) fn time_change(&mut self, new_time: u64) -> Result<()> {
        match new_time.cmp(&self.end_time) {
            Ordering::Less => Err(FstWriteError::TimeDecrease(self.end_time, new_time)),
            Ordering::Equal => Ok(()),
            Ordering::Greater => {
                let first_time_step = self.time_table.is_empty();
                if first_time_step {
                    // at the end of the first step, we copy values over into the frame
                    self.frame = self.values.clone();
                } else {
                    // the first step is not captured in the time table, but instead in the start_time
                    self.time_table_index += 1;
                }
                debug_assert!(self.start_time <= self.end_time);

                // in the first step, the time needs to be written relative to 0
                let delta_to = if first_time_step { 0 } else { self.end_time };
                // write timetable in compressed format
                write_time_chain_update(&mut self.time_table, delta_to, new_time)?;
                self.end_time = new_time;
                Ok(())
            }
        }
    }

    pub(crate) fn signal_change(&mut self, signal_id: FstSignalId, value: &[u8]) -> Result<()> {
        let info = match self.signal_info.get(signal_id.to_array_index()) {
            Some(info) => info,
            None => return Err(FstWriteError::InvalidSignalId(signal_id)),
        };
        let len = info.len as usize;
        let start = info.offset as usize;
        let range = start..start + len;
        let value_cow = if value.len() == len {
            Cow::Borrowed(value)
        } else {
            let expanded = expand_special_vector_cases(value, len).unwrap_or_else(|| {
                panic!(
                    "Failed to parse four state value: {} for signal of size {}",
                    String::from_utf8_lossy(value),
                    len
                )
            });
            assert_eq!(expanded.len(), len);
            Cow::Owned(expanded)
        };
        let value = value_cow.as_ref();
        debug_assert_eq!(value.len(), len);
        let first_time_step = self.time_table.is_empty();
        if first_time_step && self.first_buffer {
            self.values[range].copy_from_slice(value);
        } else {
            if self.time_table.is_empty() {
                // write_time_chain_update(&mut self.time_table, 0, self.end_time)?;
                todo!("Currently we only support flushing right before a new time step.")
            }

            // check to see if there actually was a change
            if self.deduplicate && &self.values[range.clone()] == value {
                return Ok(());
            }
            self.values[range].copy_from_slice(value);
            // write down value change
            let time_table_idx_delta = (self.time_table_index
                - self.prev_time_table_index[signal_id.to_array_index()])
                as u64;
            let list = &mut self.value_changes[signal_id.to_array_index()];
            let before = list.len();
            match value {
                [value] => write_one_bit_signal(list, time_table_idx_delta, *value)?,
                values => write_multi_bit_signal(list, time_table_idx_delta, values)?,
            }
            self.value_changes_bytes += list.len() - before + 4;

            // remember previous time-table index
            self.prev_time_table_index[signal_id.to_array_index()] = self.time_table_index;
        }
        Ok(())
    }

    fn num_time_table_entries(&self) -> u64 {
        if self.time_table.is_empty() {
            0
        } else {
            self.time_table_index as u64 + 1
        }
    }

    pub(crate) fn flush(&mut self, output: &mut (impl Write + Seek)) -> Result<u64> {
        // write data
        write_value_change_section(
            output,
            self.start_time,
            self.end_time,
            &self.frame,
            &self.time_table,
            self.num_time_table_entries(),
            |signal_idx: usize| &self.value_changes[signal_idx][..],
            self.signal_info.len(),
        )?;

        // reset data
        self.time_table_index = 0;
        for idx in self.prev_time_table_index.iter_mut() {
            *idx = 0;
        }
        self.start_time = self.end_time;
        self.time_table.clear();
        for l in self.value_changes.iter_mut() {
            l.clear();
        }
        self.value_changes_bytes = 0;
        self.first_buffer = false;

        // TODO: recycle?
        Ok(self.end_time)
    }

    /// Returns the estimated size of all data structures that grow over time.
    pub(crate) fn size(&self) -> usize {
        self.time_table.len() + self.value_changes_bytes
    }
}

/// tries to expand common shortenings used in VCD encodings
#[inline]
fn expand_special_vector_cases(value: &[u8], len: usize) -> Option<Vec<u8>> {
    // if the value is actually longer than expected, there is nothing we can do
    if value.len() >= len {
        return None;
    }

    // zero, x or z extend
    match value[0] {
        b'1' | b'0' => {
            let mut extended = Vec::with_capacity(len);
            extended.resize(len - value.len(), b'0');
            extended.extend_from_slice(value);
            Some(extended)
        }
        b'x' | b'X' | b'z' | b'Z' => {
            let mut extended = Vec::with_capacity(len);
            extended.resize(len - value.len(), value[0]);
            extended.extend_from_slice(value);
            Some(extended)
        }
        _ => None, // failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer_with_signals(lens: &[u32]) -> SignalBuffer {
        let signals = lens
            .iter()
            .map(|len| FstSignalType::bit_vec(*len))
            .collect::<Vec<_>>();
        SignalBuffer::new(&signals).unwrap()
    }

    /// An invalid signal id returns an error.
    #[test]
    fn test_signal_change_with_invalid_signal_id() {
        let mut buffer = buffer_with_signals(&[1, 1]);
        // ids are one based, so 2 is the last valid one
        buffer
            .signal_change(FstSignalId::from_index(2), b"1")
            .unwrap();
        let err = buffer
            .signal_change(FstSignalId::from_index(3), b"1")
            .unwrap_err();
        match err {
            FstWriteError::InvalidSignalId(id) => assert_eq!(id, FstSignalId::from_index(3)),
            other => panic!("unexpected error: {other:?}"),
        }
    }

    /// A value shorter than its signal that starts with none of the extendable characters fails to
    /// parse.
    #[test]
    #[should_panic(expected = "Failed to parse four state value: hh for signal of size 4")]
    fn test_signal_change_with_unexpandable_value() {
        let mut buffer = buffer_with_signals(&[4]);
        buffer
            .signal_change(FstSignalId::from_index(1), b"hh")
            .unwrap();
    }

    #[test]
    fn test_expand_special_vector_cases() {
        // zero extension, whatever the leading bit is
        assert_eq!(expand_special_vector_cases(b"1", 4), Some(b"0001".to_vec()));
        assert_eq!(
            expand_special_vector_cases(b"01", 4),
            Some(b"0001".to_vec())
        );
        // x and z extension repeat the leading character, in either case
        assert_eq!(
            expand_special_vector_cases(b"x1", 4),
            Some(b"xxx1".to_vec())
        );
        assert_eq!(
            expand_special_vector_cases(b"X1", 4),
            Some(b"XXX1".to_vec())
        );
        assert_eq!(
            expand_special_vector_cases(b"z0", 4),
            Some(b"zzz0".to_vec())
        );
        assert_eq!(
            expand_special_vector_cases(b"Z0", 4),
            Some(b"ZZZ0".to_vec())
        );
        // no rule covers the other characters
        assert_eq!(expand_special_vector_cases(b"h", 4), None);
        assert_eq!(expand_special_vector_cases(b"-", 4), None);
        // a value that is not actually short is left alone
        assert_eq!(expand_special_vector_cases(b"0011", 4), None);
        assert_eq!(expand_special_vector_cases(b"00111", 4), None);
    }
}
