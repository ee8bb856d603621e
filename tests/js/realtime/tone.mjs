// The speech every realtime test sends without a microphone: 3 s of a 300 Hz tone at 44.1 kHz (speech to the
// emulator's energy detector), then 2 s of silence, in 10 ms blocks through `transcriber.sendAudio`. Runtime-neutral.
export function sendTone(transcriber) {
  const rate = 44100;
  for (let n = 0; n < rate * 5; n += 441) {
    const block = new Float32Array(441);
    if (n < rate * 3) for (let i = 0; i < 441; i++) block[i] = 0.3 * Math.sin((2 * Math.PI * 300 * (n + i)) / rate);
    transcriber.sendAudio(block, rate);
  }
}
