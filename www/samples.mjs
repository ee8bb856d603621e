// The demo's sample documents, built in memory (no binary files in the repository): an invoice as a real one-page
// PDF with a text layer, a contract as plain text and a meeting note as markdown. The service reads `Label: value`
// lines, so each document carries a few of them; the extraction schema offered with each names those fields.

const INVOICE = [
  "ACME Office Supplies Ltd",
  "12 Harbour Road, Bristol BS1 4QA",
  "",
  "Invoice number: INV-2041",
  "Invoice date: 2026-11-03",
  "Due date: 2026-12-03",
  "Customer name: Northwind Traders",
  "Customer email: billing@northwind.example",
  "Purchase order: PO-88310",
  "Subtotal: 1,070.42 EUR",
  "VAT: 214.08 EUR",
  "Total due: 1,284.50 EUR",
  "Payment terms: 30 days net",
  "",
  "Questions? Call Maria Lopez on +44 117 496 0123.",
];

const CONTRACT = `SERVICE AGREEMENT

Agreement number: SA-2026-117
Effective date: 2026-11-15
Provider: Bright Data Labs GmbH
Client: Northwind Traders Ltd
Term: 24 months, renewing yearly unless cancelled
Monthly fee: 4,200.00 EUR
Notice period: 90 days
Governing law: England and Wales
Liability cap: 12 months of fees

1. Services. The Provider operates document processing for the Client.
2. Data. Personal data is processed on documented instructions only.
3. Termination. Either party may end this agreement with the notice period above.

Signed for the Provider by Jonas Weber (jonas.weber@brightdata.example, +49 30 901820).
Signed for the Client by Priya Raman (priya.raman@northwind.example, +44 20 7946 0958).
`;

const NOTE = `# Call notes: onboarding

Date: 2026-11-18
Attendees: Priya Raman, Tom Becker
Topic: invoice automation pilot
Next step: send the signed agreement to legal
Owner email: tom.becker@northwind.example
Phone: +44 20 7946 0311

Tom Becker will share three sample invoices by Friday.
Priya Raman asked for a weekly summary of the pilot.
`;

const nullable = (description) => ({ type: ["string", "null"], description });

/** The samples: id, file name, media type, a line of description, the text and an extraction schema to start from. */
export const SAMPLES = [
  {
    id: "invoice",
    file: "invoice.pdf",
    type: "application/pdf",
    title: "Invoice (PDF)",
    description: "One-page PDF invoice with totals, dates and a customer.",
    text: INVOICE.join("\n") + "\n",
    schema: {
      type: "object",
      properties: {
        invoice_number: nullable("Invoice number"),
        invoice_date: nullable("Invoice date"),
        due_date: nullable("Due date"),
        customer: {
          type: "object",
          properties: { name: nullable("Customer name"), email: nullable("Customer email") },
        },
        total_due: nullable("Total due, with currency"),
        vat: nullable("VAT amount"),
      },
    },
  },
  {
    id: "contract",
    file: "contract.txt",
    type: "text/plain; charset=utf-8",
    title: "Contract (text)",
    description: "A service agreement between two companies.",
    text: CONTRACT,
    schema: {
      type: "object",
      properties: {
        agreement_number: nullable("Agreement number"),
        effective_date: nullable("Effective date"),
        provider: nullable("Provider"),
        client: nullable("Client"),
        monthly_fee: nullable("Monthly fee"),
        notice_period: nullable("Notice period"),
        governing_law: nullable("Governing law"),
      },
    },
  },
  {
    id: "note",
    file: "note.md",
    type: "text/markdown; charset=utf-8",
    title: "Meeting note (markdown)",
    description: "Plain notes of a call, with names, an email and a phone number.",
    text: NOTE,
    schema: {
      type: "object",
      properties: {
        date: nullable("Date of the call"),
        topic: nullable("Topic"),
        next_step: nullable("Next step"),
        owner_email: nullable("Owner email"),
      },
    },
  },
];

const enc = new TextEncoder();

/** A one-page PDF (Helvetica, one text line per `Td` move) whose text layer holds `lines`. */
export function textPdf(lines) {
  const esc = (s) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const ops = ["BT", "/F1 13 Tf", "16 TL", "56 780 Td"];
  for (const [i, line] of lines.entries()) {
    if (i > 0) ops.push("0 -18 Td");
    ops.push(`(${esc(line)}) Tj`);
  }
  ops.push("ET");
  const stream = ops.join("\n");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    `<< /Length ${enc.encode(stream).length} >>\nstream\n${stream}\nendstream`,
  ];
  let out = "%PDF-1.4\n";
  const offsets = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(enc.encode(out).length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  }
  const xref = enc.encode(out).length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return enc.encode(out);
}

const pdf = textPdf(INVOICE.filter((l) => l !== ""));

/** The bytes of a sample (`Uint8Array`). */
export function sampleBytes(sample) {
  return sample.id === "invoice" ? pdf : enc.encode(sample.text);
}
