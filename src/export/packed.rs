//! Text packed into the page: gzip, in base64, inside an inert
//! `<script type="application/octet-stream">` (the browser neither runs nor parses it; the
//! viewer decodes it with `DecompressionStream` when it needs it). Base64 has no `<`, so no
//! session text can end the element, and the text is streamed through: nothing is held but
//! the compressor's window.

use std::io::{self, Write};

use base64::engine::general_purpose::STANDARD;
use base64::write::EncoderWriter;
use flate2::Compression;
use flate2::write::GzEncoder;

/// gzip level 6: on sessions (text with embedded base64 images) level 9 saves about 0.3% for
/// twice the time.
const LEVEL: u32 = 6;

/// One packed element being written; [`PackedElement::finish`] closes it.
pub(crate) struct PackedElement<'a> {
    encoder: GzEncoder<EncoderWriter<'static, base64::engine::GeneralPurpose, &'a mut dyn Write>>,
    raw: u64,
}

impl<'a> PackedElement<'a> {
    /// Opens the element with `attributes` (our own text: `id="…"`, `class="…"`, …).
    pub(crate) fn open(out: &'a mut dyn Write, attributes: &str) -> io::Result<Self> {
        write!(
            out,
            "<script type=\"application/octet-stream\" {attributes}>"
        )?;
        Ok(PackedElement {
            encoder: GzEncoder::new(EncoderWriter::new(out, &STANDARD), Compression::new(LEVEL)),
            raw: 0,
        })
    }

    /// Bytes written so far, before compression.
    pub(crate) fn raw_len(&self) -> u64 {
        self.raw
    }

    /// Ends the gzip stream and the base64 text, and closes the element.
    pub(crate) fn finish(self) -> io::Result<()> {
        let out = self.encoder.finish()?.finish()?;
        out.write_all(b"</script>\n")
    }
}

impl Write for PackedElement<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.encoder.write(buf)?;
        self.raw += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.encoder.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use base64::Engine;

    use super::*;

    #[test]
    fn export_packed_text_reads_back_and_cannot_close_its_element() {
        let text = "</script><script>alert(1)</script><!-- ".repeat(1000);
        let mut page = Vec::new();
        let mut element = PackedElement::open(&mut page, "id=\"x\"").unwrap();
        element.write_all(text.as_bytes()).unwrap();
        assert_eq!(element.raw_len(), text.len() as u64);
        element.finish().unwrap();
        let page = String::from_utf8(page).unwrap();
        let body = page
            .strip_prefix("<script type=\"application/octet-stream\" id=\"x\">")
            .and_then(|rest| rest.strip_suffix("</script>\n"))
            .unwrap();
        assert!(!body.contains('<'));
        let gzip = STANDARD.decode(body).unwrap();
        let mut back = String::new();
        flate2::read::GzDecoder::new(&gzip[..])
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, text);
    }
}
