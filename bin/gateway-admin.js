#!/usr/bin/env node
// `npx gateway-admin`: registers tsx's loader, then runs the TypeScript CLI unchanged.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/admin.ts");
