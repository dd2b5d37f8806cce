/**
 * PDF file parts made readable by each route (engine/ports.ts `DocumentPreparer`): passed as files
 * to routes that read PDFs, turned into text for the others, fetched through web_fetch's checked
 * fetcher when given by URL. docs/server-tools-media.md says what a caller sees.
 */
export {
  CONCURRENT_READS,
  createDocumentPreparer,
  type DocumentPreparerOptions,
  MAX_DOCUMENTS_READ,
} from "./create-document-preparer.js";
export { filenameFromUrl } from "./fetch-file-url.js";
export { readPdfActivation } from "./read-pdf-activation.js";
