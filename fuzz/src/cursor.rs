//! The reader of every input format: little-endian fields that read as
//! zero past the end of the input, so a mutated input always means
//! something.

/// Little-endian fields off the front of the input; past its end, every
/// field reads as zero and every byte run as empty.
pub struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data }
    }

    /// Up to `n` bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        head
    }

    fn uint(&mut self, n: usize) -> u64 {
        self.take(n)
            .iter()
            .rev()
            .fold(0, |acc, &b| (acc << 8) | u64::from(b))
    }

    /// One byte.
    pub fn u8(&mut self) -> u8 {
        self.uint(1) as u8
    }

    /// Four bytes.
    pub fn u32(&mut self) -> u32 {
        self.uint(4) as u32
    }

    /// Eight bytes.
    pub fn u64(&mut self) -> u64 {
        self.uint(8)
    }

    /// What is left.
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(usize::MAX)
    }

    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}
